package io.cerberus.redis;

import io.cerberus.EngineOptions;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Settings of a Redis engine ({@code redis}, {@code rediss}, {@code redis-sentinel},
 * {@code redis-cluster} and their TLS forms) that do not belong in its URI. A setting given here
 * overrides the URI's.
 *
 * <pre>{@code
 * Cerberus.builder()
 *         .engine("rediss://redis.internal:6380", RedisOptions.builder()
 *                 .user("locks").password(secret)
 *                 .trustStore(Path.of("/etc/pki/redis-ca.p12"), storePassword)
 *                 .waitForReplicas(1, Duration.ofMillis(50))
 *                 .build())
 *         .build();
 * }</pre>
 *
 * Passwords are copied when the options are built and never appear in {@link #toString()},
 * messages or logs.
 */
public final class RedisOptions implements EngineOptions {
    private final String user;
    private final char[] password;
    private final Path trustStore;
    private final char[] trustStorePassword;
    private final Path keyStore;
    private final char[] keyStorePassword;
    private final int waitReplicas;
    private final Duration waitTimeout;
    private final Boolean acceptEviction;

    private RedisOptions(Builder b) {
        this.user = b.user;
        this.password = b.password;
        this.trustStore = b.trustStore;
        this.trustStorePassword = b.trustStorePassword;
        this.keyStore = b.keyStore;
        this.keyStorePassword = b.keyStorePassword;
        this.waitReplicas = b.waitReplicas;
        this.waitTimeout = b.waitTimeout;
        this.acceptEviction = b.acceptEviction;
    }

    /** @return a builder with nothing set */
    public static Builder builder() {
        return new Builder();
    }

    Optional<String> user() {
        return Optional.ofNullable(user);
    }

    Optional<char[]> password() {
        return Optional.ofNullable(password).map(char[]::clone);
    }

    Optional<Path> trustStore() {
        return Optional.ofNullable(trustStore);
    }

    char[] trustStorePassword() {
        return trustStorePassword == null ? null : trustStorePassword.clone();
    }

    Optional<Path> keyStore() {
        return Optional.ofNullable(keyStore);
    }

    char[] keyStorePassword() {
        return keyStorePassword == null ? null : keyStorePassword.clone();
    }

    /** @return the replicas to wait for after a grant, 0 when off */
    int waitReplicas() {
        return waitReplicas;
    }

    Duration waitTimeout() {
        return waitTimeout;
    }

    /**
     * @param options the options given, or null
     * @param inUri the URI's {@code acceptEviction}, false when absent
     * @return whether a server that may evict keys is accepted: as the options say, else as the URI says
     */
    static boolean acceptsEviction(RedisOptions options, boolean inUri) {
        return options != null && options.acceptEviction != null ? options.acceptEviction : inUri;
    }

    @Override
    public String toString() {
        return "RedisOptions[user=" + user + ", password=" + (password == null ? "none" : "(hidden)") + ", trustStore="
                + trustStore
                + ", keyStore=" + keyStore + ", waitReplicas=" + waitReplicas + ", waitTimeout="
                + Durations.format(waitTimeout)
                + (acceptEviction == null ? "" : ", acceptEviction=" + acceptEviction) + "]";
    }

    /** Builds {@link RedisOptions}. Bad values fail in the setter, naming the rule. */
    public static final class Builder {
        private String user;
        private char[] password;
        private Path trustStore;
        private char[] trustStorePassword;
        private Path keyStore;
        private char[] keyStorePassword;
        private int waitReplicas;
        private Duration waitTimeout = RedisEngine.DEFAULT_WAIT_TIMEOUT;
        private Boolean acceptEviction;

        private Builder() {}

        /**
         * @param user the ACL user name (Redis 6 and later); overrides the URI's
         * @return this builder
         */
        public Builder user(String user) {
            this.user = Arguments.name("redis user", user, 256);
            return this;
        }

        /**
         * @param password the password ({@code AUTH}); copied, overrides the URI's
         * @return this builder
         */
        public Builder password(char[] password) {
            Arguments.notNull("redis password", password);
            this.password = password.clone();
            return this;
        }

        /**
         * Trusts the certificates of a key store (PKCS#12 or JKS) instead of the JVM's trust store,
         * for {@code rediss} URIs.
         *
         * @param file the trust store file
         * @param storePassword its password, or {@code null} if it has none
         * @return this builder
         */
        public Builder trustStore(Path file, char[] storePassword) {
            this.trustStore = readable("trust store", file);
            this.trustStorePassword = storePassword == null ? null : storePassword.clone();
            return this;
        }

        /**
         * Presents the client certificate of a key store (PKCS#12 or JKS) to servers that ask for
         * one (mutual TLS), for {@code rediss} URIs.
         *
         * @param file the key store file
         * @param storePassword its password, or {@code null} if it has none
         * @return this builder
         */
        public Builder keyStore(Path file, char[] storePassword) {
            this.keyStore = readable("key store", file);
            this.keyStorePassword = storePassword == null ? null : storePassword.clone();
            return this;
        }

        /**
         * After each grant, waits until {@code replicas} replicas have the new hold ({@code WAIT}),
         * so a Sentinel or Cluster failover right after the grant cannot lose it. A grant that
         * fewer replicas acknowledge in time is released again and the acquisition fails with
         * {@link io.cerberus.EngineUnavailableException}. Costs one more round trip per grant, at
         * least the replication delay. Off ({@code 0}) by default.
         *
         * @param replicas how many replicas must acknowledge, 0 to turn it off
         * @param timeout how long to wait for them, positive
         * @return this builder
         */
        public Builder waitForReplicas(int replicas, Duration timeout) {
            if (replicas < 0) {
                throw new IllegalArgumentException("the replicas to wait for must be 0 or more, was " + replicas);
            }
            this.waitReplicas = replicas;
            this.waitTimeout = Arguments.positive("replica wait timeout", timeout);
            return this;
        }

        /**
         * Accepts servers whose {@code maxmemory-policy} may evict keys (any policy but
         * {@code noeviction}, with a {@code maxmemory}): the engine opens with a warning instead of
         * refusing them with {@link io.cerberus.UnsafeEngineException}. Redis may then delete a lock's
         * key before its lease ends (the hold is reported lost, possibly after another client took the
         * lock) and an idempotency record before its window ends (the operation may run again). As
         * the URI parameter {@code acceptEviction=true}; this setting overrides the URI's.
         *
         * @param accept whether to accept such servers; {@code false} by default
         * @return this builder
         */
        public Builder acceptEviction(boolean accept) {
            this.acceptEviction = accept;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException if a user is given without a password
         */
        public RedisOptions build() {
            if (user != null && password == null) {
                throw new IllegalArgumentException(
                        "RedisOptions give a user but no password; give the password with it");
            }
            if (keyStore != null && keyStorePassword == null) {
                keyStorePassword = new char[0];
            }
            return new RedisOptions(this);
        }

        private static Path readable(String what, Path file) {
            Arguments.notNull(what, file);
            if (!Files.isReadable(file)) {
                throw new IllegalArgumentException("the " + what + " " + file + " must be a readable file");
            }
            return file;
        }
    }
}
