package io.cerberus.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code cerberus.*} settings of the auto-configured {@link io.cerberus.Cerberus} client and
 * its idempotency guard. Durations take Spring's forms: {@code 500ms}, {@code 5s}, {@code 1m},
 * {@code PT5S}; a bare number is milliseconds. Every value is checked when the client is built, so
 * a bad one fails the application's start with a message naming the rule, and so does a
 * {@code cerberus.*} property that is none of these (a misspelt name).
 */
@ConfigurationProperties(prefix = "cerberus")
public class CerberusProperties {

    /**
     * Engine URIs, in order: the first is the primary, the others are where failover and
     * switchEngine() go. Required: without one the application does not start ("mem:" keeps locks
     * in this JVM only, for tests and one-process tools). "jdbc:datasource" uses the application's
     * DataSource (needs cerberus-jdbc). A URI with commas (several hosts) must be one element, as a
     * single value is split at every comma: cerberus.engines[0]=zk://a:2181,b:2181/app,
     * CERBERUS_ENGINES_0_=..., or a YAML list item.
     */
    private List<String> engines = new ArrayList<>();

    /**
     * Namespace (application key): locks and idempotency records of different namespaces never
     * meet, even on the same engine. 1 to 128 characters.
     */
    private String namespace = "default";

    /**
     * Lease of locks taken without an explicit lease: how long the engine keeps the lock of a
     * holder that stopped renewing it (crash, pause). At least 100ms; renewed every lease/3.
     */
    private Duration defaultLease = Duration.ofSeconds(30);

    /** How long an engine may take to connect or to answer a command before it counts as unavailable. */
    private Duration connectTimeout = Duration.ofSeconds(10);

    /**
     * After an engine switch, how long new locks are also taken on the old engine. When absent:
     * the longest lease the old engine granted this client, at least the default lease; 0 turns it off.
     */
    private Duration lockDelay;

    /** Automatic failover between the engines. */
    private final Failover failover = new Failover();

    /** The idempotency guard and @Idempotent methods. */
    private final Idempotency idempotency = new Idempotency();

    /** Elections this instance takes part in. */
    private final Leadership leadership = new Leadership();

    private final Web web = new Web();

    public List<String> getEngines() {
        return engines;
    }

    public void setEngines(List<String> engines) {
        this.engines = engines;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public Duration getDefaultLease() {
        return defaultLease;
    }

    public void setDefaultLease(Duration defaultLease) {
        this.defaultLease = defaultLease;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public Duration getLockDelay() {
        return lockDelay;
    }

    public void setLockDelay(Duration lockDelay) {
        this.lockDelay = lockDelay;
    }

    public Failover getFailover() {
        return failover;
    }

    public Idempotency getIdempotency() {
        return idempotency;
    }

    public Leadership getLeadership() {
        return leadership;
    }

    public Web getWeb() {
        return web;
    }

    /** {@code cerberus.web.*}: how web applications answer Cerberus's exceptions. */
    public static class Web {

        private final ErrorStatuses errorStatuses = new ErrorStatuses();

        public ErrorStatuses getErrorStatuses() {
            return errorStatuses;
        }
    }

    /** {@code cerberus.web.error-statuses.*}: the handler that maps Cerberus's exceptions to HTTP statuses. */
    public static class ErrorStatuses {

        /**
         * Whether a busy lock is answered 409 and an unreachable engine 503 (RFC 9457 problem details)
         * instead of 500. The application's own exception handlers come first.
         */
        private boolean enabled = true;

        /** The Retry-After of the 503 answer to an unreachable engine or idempotency store (whole seconds). */
        private Duration retryAfter = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }
    }

    /** {@code cerberus.leadership.*}: the elections the starter runs ({@link LeaderElections}). */
    public static class Leadership {

        /**
         * Names of elections this instance takes part in from start-up to shutdown, besides those its
         * LeaderWork beans name; follow them with @EventListener on LeadershipEvent.
         */
        private List<String> elections = new ArrayList<>();

        public List<String> getElections() {
            return elections;
        }

        public void setElections(List<String> elections) {
            this.elections = elections;
        }
    }

    /** {@code cerberus.failover.*}: see {@link io.cerberus.FailoverPolicy}. */
    public static class Failover {

        /** Whether to switch engines by itself when the current one fails its health checks. Needs two engines or more. */
        private boolean enabled;

        /** How long the current engine must fail its health checks before the client switches. At least 10ms. */
        private Duration after = Duration.ofSeconds(5);

        /** Time between two health checks of an engine. At least 10ms. */
        private Duration checkEvery = Duration.ofSeconds(1);

        /**
         * How long the primary engine must pass its checks before the client moves back to it by
         * itself. When absent, it does not fail back by itself.
         */
        private Duration failBackAfter;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getAfter() {
            return after;
        }

        public void setAfter(Duration after) {
            this.after = after;
        }

        public Duration getCheckEvery() {
            return checkEvery;
        }

        public void setCheckEvery(Duration checkEvery) {
            this.checkEvery = checkEvery;
        }

        public Duration getFailBackAfter() {
            return failBackAfter;
        }

        public void setFailBackAfter(Duration failBackAfter) {
            this.failBackAfter = failBackAfter;
        }
    }

    /** {@code cerberus.idempotency.*}: see {@link io.cerberus.idempotency.IdempotencyOptions}. */
    public static class Idempotency {

        /**
         * How long a claimed key stays IN_PROGRESS without renewal: the key of a crashed attempt
         * is free again after this. At least 100ms; renewed every lease/3 while the operation runs.
         */
        private Duration lease = Duration.ofSeconds(30);

        /**
         * How long a duplicate waits for the first attempt, while it runs, to finish (then its
         * result is replayed). When absent, such a duplicate is rejected at once with
         * OperationInProgressException (HTTP 409), unlike the core's guard, which waits 30s: a waiting
         * duplicate holds a request thread. For @Idempotent methods and the Idempotency-Key filter alike.
         */
        private Duration waitWhenInProgress;

        /**
         * Whether to run the operation without the guard when the store cannot be reached (logged
         * and counted) instead of refusing it with IdempotencyStoreUnavailableException.
         */
        private boolean failOpen;

        /** Tries of a store call (backoff 50ms, doubling) before the store counts as down. 1 to 10. */
        private int storeAttempts = 3;

        /**
         * Whether an @Idempotent @Transactional method writes its result in its own transaction, so the
         * result commits with its effects, when the records are in the application's DataSource (engine
         * jdbc:datasource). Off: the result is stored after the commit.
         */
        private boolean completeInTransaction = true;

        /** The Idempotency-Key filter of HTTP requests (servlet applications). */
        private final Http http = new Http();

        public Http getHttp() {
            return http;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getWaitWhenInProgress() {
            return waitWhenInProgress;
        }

        public void setWaitWhenInProgress(Duration waitWhenInProgress) {
            this.waitWhenInProgress = waitWhenInProgress;
        }

        public boolean isFailOpen() {
            return failOpen;
        }

        public void setFailOpen(boolean failOpen) {
            this.failOpen = failOpen;
        }

        public int getStoreAttempts() {
            return storeAttempts;
        }

        public boolean isCompleteInTransaction() {
            return completeInTransaction;
        }

        public void setCompleteInTransaction(boolean completeInTransaction) {
            this.completeInTransaction = completeInTransaction;
        }

        public void setStoreAttempts(int storeAttempts) {
            this.storeAttempts = storeAttempts;
        }
    }

    /** Settings of the {@code Idempotency-Key} HTTP filter ({@link IdempotencyKeyFilter}). */
    public static class Http {

        /** Whether requests with an Idempotency-Key header run once per key, their responses replayed to duplicates. */
        private boolean enabled;

        /** Path patterns of the guarded requests (Spring path patterns, without the context path). */
        private List<String> paths = new ArrayList<>(List.of("/**"));

        /** HTTP methods of the guarded requests. */
        private List<String> methods = new ArrayList<>(List.of("POST", "PATCH"));

        /** The request header that carries the client's key. */
        private String headerName = "Idempotency-Key";

        /** Whether a guarded request without the header is refused with 400. When false, it runs unguarded. */
        private boolean required;

        /** How long a stored response is replayed to duplicates. */
        private Duration retention = Duration.ofDays(1);

        /** The response header, set to "true", that marks a replayed response. */
        private String replayHeader = "Idempotent-Replayed";

        /** Response headers stored with the status and the body, and replayed. */
        private List<String> storedHeaders =
                new ArrayList<>(List.of("Content-Type", "Content-Language", "Location", "ETag"));

        /** Largest request body read to fingerprint the request (a bigger one is refused with 413). */
        private DataSize maxBodySize = DataSize.ofMegabytes(1);

        /**
         * Whether keys are scoped to the authenticated user (the request's principal name): the same
         * key from two users is two keys, so no user is replayed another's response. Requests without
         * a principal share one scope.
         */
        private boolean perUser = true;

        /** Whether a guarded request without an authenticated user is refused with 401 instead of sharing one scope. */
        private boolean requireUser;

        /**
         * Largest response body stored for replay. A larger response is sent, and remembered as
         * "ran, response not kept": a duplicate gets 422 and nothing runs again.
         */
        private DataSize maxStoredResponseSize = DataSize.ofMegabytes(1);

        /**
         * Whether each guarded request runs in a transaction of the application's DataSource, its stored response
         * written in it, so the response is stored if and only if the request's effects commit. Needs the engine
         * jdbc:datasource and a single transaction manager; servlet applications only. A response that is not
         * stored (5xx, 408, 409, 425, 429, an exception) rolls the request's effects back.
         */
        private boolean transaction;

        public boolean isTransaction() {
            return transaction;
        }

        public void setTransaction(boolean transaction) {
            this.transaction = transaction;
        }

        public boolean isRequireUser() {
            return requireUser;
        }

        public void setRequireUser(boolean requireUser) {
            this.requireUser = requireUser;
        }

        public DataSize getMaxStoredResponseSize() {
            return maxStoredResponseSize;
        }

        public void setMaxStoredResponseSize(DataSize maxStoredResponseSize) {
            this.maxStoredResponseSize = maxStoredResponseSize;
        }

        public boolean isPerUser() {
            return perUser;
        }

        public void setPerUser(boolean perUser) {
            this.perUser = perUser;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getHeaderName() {
            return headerName;
        }

        public void setHeaderName(String headerName) {
            this.headerName = headerName;
        }

        public boolean isRequired() {
            return required;
        }

        public void setRequired(boolean required) {
            this.required = required;
        }

        public Duration getRetention() {
            return retention;
        }

        public void setRetention(Duration retention) {
            this.retention = retention;
        }

        public String getReplayHeader() {
            return replayHeader;
        }

        public void setReplayHeader(String replayHeader) {
            this.replayHeader = replayHeader;
        }

        public List<String> getStoredHeaders() {
            return storedHeaders;
        }

        public void setStoredHeaders(List<String> storedHeaders) {
            this.storedHeaders = storedHeaders;
        }

        public DataSize getMaxBodySize() {
            return maxBodySize;
        }

        public void setMaxBodySize(DataSize maxBodySize) {
            this.maxBodySize = maxBodySize;
        }
    }
}
