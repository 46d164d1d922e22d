package io.cerberus.redis;

import io.cerberus.spi.LockKey;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Redis keys of one lock. Every key and the pub/sub channel of a lock share one hash tag,
 * {@code cerberus:{NAMESPACE:NAME}:SUFFIX}, so Redis Cluster keeps them on one slot and a script
 * may touch them all.
 *
 * <p>Namespace and name are percent-encoded (UTF-8 bytes outside a small safe set become
 * {@code %XX}): the encoded text never contains a brace (which would end the hash tag early), a
 * glob character ({@code * ? [ ] \}, so a SCAN pattern built from it matches literally), a space
 * or non-ASCII, and the namespace never contains {@code :}. The encoding is injective, so two
 * different locks never share a key, and it preserves prefixes, so a name prefix becomes a key
 * prefix.
 *
 * @param owner hash of the exclusive (or write) hold: token, fence, mode, holder; expires with the lease
 * @param fence the fencing counter of the name
 * @param readers sorted set of reader tokens by expiry (server milliseconds)
 * @param readerInfo hash of reader token to {@code fence:holder}
 * @param queue sorted set of queued waiters by arrival (server microseconds)
 * @param queueDeadlines sorted set of queued waiters by the time they are dropped unless they retry
 * @param channel the pub/sub channel on which releases are announced
 */
record LockKeys(
        String owner,
        String fence,
        String readers,
        String readerInfo,
        String queue,
        String queueDeadlines,
        String channel) {
    static final String PREFIX = "cerberus:{";
    private static final String SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~/@+=,;!$&#";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** Recently used names' keys: a lock is usually taken again and again, and renewed every third of a lease. */
    private static final int CACHED = 4096;

    private static final Map<LockKey, LockKeys> RECENT = new ConcurrentHashMap<>();

    static LockKeys of(LockKey key) {
        LockKeys keys = RECENT.get(key);
        if (keys == null) {
            if (RECENT.size() >= CACHED) {
                RECENT.clear(); // crude, and enough: the names in use come back at their next call
            }
            keys = build(key);
            RECENT.put(key, keys);
        }
        return keys;
    }

    private static LockKeys build(LockKey key) {
        String tag = tag(key.namespace(), key.name());
        String base = PREFIX + tag + "}:";
        return new LockKeys(
                base + "owner",
                base + "fence",
                base + "readers",
                base + "reader-info",
                base + "queue",
                base + "queue-deadlines",
                base + "changed");
    }

    /**
     * @param namespace a namespace
     * @return {@code cerberus:{NS:}:epoch}, the key of the namespace's epoch ({@link io.cerberus.spi.KeepsEpochs}):
     *     under the namespace's prefix like its locks, and no lock's key, since lock names are not empty (a lock's
     *     hash tag is {@code NS:NAME}), nor an idempotency record's ({@code NS:idem:KEY})
     */
    static String epochKey(String namespace) {
        return PREFIX + encode(namespace, false) + ":}:epoch";
    }

    /** @return the six keys of the lock, in the order the scripts expect them */
    String[] all() {
        return new String[] {owner, fence, readers, readerInfo, queue, queueDeadlines};
    }

    /**
     * @param namespace a namespace
     * @param prefix a lock-name prefix, may be empty
     * @return a SCAN pattern matching every key of the namespace's locks whose name starts with the prefix
     */
    static String scanPattern(String namespace, String prefix) {
        return PREFIX + encode(namespace, false) + ":" + encode(prefix, true) + "*}:*";
    }

    /**
     * @param redisKey a key found by {@link #scanPattern}
     * @return the lock name if the key is the owner or readers key of a lock, else empty
     */
    static Optional<String> lockNameOfHoldKey(String redisKey) {
        if (!redisKey.startsWith(PREFIX) || !(redisKey.endsWith("}:owner") || redisKey.endsWith("}:readers"))) {
            return Optional.empty();
        }
        String tag = redisKey.substring(PREFIX.length(), redisKey.lastIndexOf("}:"));
        int colon = tag.indexOf(':');
        return colon < 0 ? Optional.empty() : Optional.of(decode(tag.substring(colon + 1)));
    }

    private static String tag(String namespace, String name) {
        return encode(namespace, false) + ":" + encode(name, true);
    }

    static String encode(String text, boolean keepColon) {
        StringBuilder out = new StringBuilder(text.length() + 8);
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            if (c < 0x80 && (SAFE.indexOf(c) >= 0 || keepColon && c == ':')) {
                out.append(c);
            } else {
                out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
        }
        return out.toString();
    }

    static String decode(String encoded) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%' && i + 2 < encoded.length()) {
                bytes.write(Integer.parseInt(encoded.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                bytes.write(c);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
