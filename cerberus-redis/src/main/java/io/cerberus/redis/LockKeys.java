package io.cerberus.redis;

import io.cerberus.spi.LockKey;
import io.lettuce.core.cluster.SlotHash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Redis keys of one lock. Every key and the pub/sub channel of a lock share one hash tag,
 * {@code cerberus:{NAMESPACE:NAME}:SUFFIX}, so Redis Cluster keeps them on one slot and a script
 * may touch them all. Namespace and name are percent-encoded ({@code %XX}, upper-case hex): the text
 * never holds a brace (which would end the tag), a glob character ({@code * ? [ ] \}), a space or
 * non-ASCII, the namespace no {@code :}; the encoding is injective and keeps prefixes.
 *
 * <p><b>Tokens.</b> The locks of a namespace share their token counter, so a released name leaves
 * no key: {@code cerberus:{NS:%t}:tokens} on a server or Sentinel group; on a Cluster one per slot,
 * {@code cerberus:{NS:%tN}:tokens}, its {@code N} picked to hash to the lock's slot
 * ({@link #slotCounter}). No lock's tag is {@code NS:%t…}: the encoding writes {@code %} only before
 * two upper-case hex digits.
 *
 * @param owner hash of the exclusive (or write) hold: token, fence, mode, holder, and {@code waited}
 *     once a busy answer was given against it; expires with the lease
 * @param tokens the namespace's token counter on a server or Sentinel group (not on a Cluster)
 * @param readers sorted set of reader tokens by expiry (server milliseconds)
 * @param readerInfo hash of reader token to {@code fence:holder}
 * @param queue sorted set of queued waiters by arrival (server microseconds)
 * @param queueDeadlines sorted set of queued waiters by the time they are dropped unless they retry
 * @param channel the pub/sub channel on which releases are announced
 */
record LockKeys(
        String owner,
        String tokens,
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

    /** The hash slots of a Redis Cluster. */
    private static final int SLOTS = 16384;

    /** Per namespace (by its {@link #tokens} key): the Cluster counter key of each slot, filled on first use. */
    private static final Map<String, String[]> SLOT_COUNTERS = new ConcurrentHashMap<>();

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
                PREFIX + encode(key.namespace(), false) + ":%t}:tokens",
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

    /** How many keys {@link #all} gives. */
    static final int COUNT = 6;

    /**
     * @param cluster whether the server is a Redis Cluster, whose counter must share the lock's slot
     * @return the six keys of the lock, in the order the scripts expect them: owner, token counter,
     *     readers, reader info, queue, queue deadlines
     */
    String[] all(boolean cluster) {
        String counter = cluster ? slotCounter(tokens, SlotHash.getSlot(owner)) : tokens;
        return new String[] {owner, counter, readers, readerInfo, queue, queueDeadlines};
    }

    /**
     * @param tokens a namespace's counter key, {@code cerberus:{NS:%t}:tokens}
     * @param slot a hash slot
     * @return the namespace's counter key on that slot: {@code cerberus:{NS:%tN}:tokens} with the
     *     smallest {@code N} (base 36) that hashes there; the table of a namespace is made once, about
     *     170,000 hashes
     */
    static String slotCounter(String tokens, int slot) {
        return SLOT_COUNTERS.computeIfAbsent(tokens, LockKeys::slotTable)[slot];
    }

    private static String[] slotTable(String tokens) {
        int brace = tokens.indexOf('}');
        String head = tokens.substring(0, brace);
        String tail = tokens.substring(brace);
        String[] table = new String[SLOTS];
        int filled = 0;
        for (long n = 0; filled < SLOTS; n++) {
            String key = head + Long.toString(n, 36) + tail;
            int slot = SlotHash.getSlot(key);
            if (table[slot] == null) {
                table[slot] = key;
                filled++;
            }
        }
        return table;
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
