package io.cerberus.etcd;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.etcd.jetcd.ByteSequence;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The key layout. Each attempt on a lock is one key
 * {@code <prefix>/<namespace>/<name>/<lease-hex>_<n>} attached to the client's lease, whose value
 * is {@code <mode> <token>\n<holder>}. Namespace and name are URL-encoded, so a {@code /} in them
 * cannot reach another lock's directory. The number {@code n} (beside the lease id the issue asks
 * for) lets one client have several attempts on one lock at once (two threads, two leases), each
 * create-if-absent on its own key; it is the lowest one free ({@link KeySlots}), so the same keys
 * come back. The attempt's token in the value tells an attempt's own key from one an earlier
 * attempt with the same number left behind.
 *
 * <p>Idempotency records live in their namespace's directory, under
 * {@code <prefix>/<namespace>/!idempotency/<key id>} ({@link #idempotencyKey}), so one etcd role
 * per application, granted the prefix {@code <prefix>/<namespace>/}, covers its locks and its
 * records. A URL-encoded lock name never contains {@code !}, so no lock's directory is that
 * branch, and {@link #nameOf} skips it: {@code inspect} never lists a record.
 *
 * <p>A namespace's epoch ({@link io.cerberus.spi.KeepsEpochs}) is the one key
 * {@code <prefix>/<namespace>/!epoch} ({@link #epochKey}), on no lease: for the same reason no lock's key is
 * it, and having no {@code /} after the namespace's directory it is no lock's to {@link #nameOf}.
 */
final class LockKeys {
    /** The directory of a namespace's idempotency records: no encoded lock name starts with {@code !}. */
    static final String RECORDS = "!idempotency";
    /** The name of a namespace's epoch key in its directory: no encoded lock name starts with {@code !}. */
    static final String EPOCH = "!epoch";
    /** Directories of recently used locks: encoding a name on every acquire and release showed in profiles. */
    private static final int CACHED_DIRECTORIES = 4096;

    private final String prefix;
    private final Map<LockKey, String> directories = new ConcurrentHashMap<>();

    LockKeys(String prefix) {
        this.prefix = prefix;
    }

    private String directoryOf(LockKey key) {
        String known = directories.get(key);
        if (known != null) {
            return known;
        }
        String directory = prefix + "/" + encode(key.namespace()) + "/" + encode(key.name()) + "/";
        if (directories.size() >= CACHED_DIRECTORIES) {
            directories.clear();
        }
        directories.put(key, directory);
        return directory;
    }

    /** @return the directory of all keys of a namespace, ending in {@code /} */
    ByteSequence namespaceDirectory(String namespace) {
        return bytes(prefix + "/" + encode(namespace) + "/");
    }

    /** @return the directory of the keys of one lock, ending in {@code /} */
    ByteSequence lockDirectory(LockKey key) {
        return bytes(directoryOf(key));
    }

    /**
     * @param slot the attempt's number among this client's attempts on the lock ({@link KeySlots})
     * @return the key of one attempt under one lease
     */
    ByteSequence attemptKey(LockKey key, long leaseId, int slot) {
        return bytes(directoryOf(key) + Long.toHexString(leaseId) + "_" + slot);
    }

    /**
     * @param id the record id the guard gives: {@code <namespace>/<key id>} (key ids hold no {@code /})
     * @return the key of that idempotency record
     */
    ByteSequence idempotencyKey(String id) {
        int slash = id.lastIndexOf('/');
        String namespace = slash < 0 ? "" : id.substring(0, slash);
        return bytes(prefix + "/" + encode(namespace) + "/" + RECORDS + "/" + encode(id.substring(slash + 1)));
    }

    /** @return the key of the namespace's epoch, kept for ever */
    ByteSequence epochKey(String namespace) {
        return bytes(prefix + "/" + encode(namespace) + "/" + EPOCH);
    }

    /** @return the value stored in an attempt's key */
    static ByteSequence value(Acquisition attempt) {
        return bytes(attempt.mode().label() + " " + attempt.token() + "\n" + attempt.holder());
    }

    /** @return the first line of a value: the mode, then (from this version on) a space and the token */
    private static String firstLine(ByteSequence value) {
        String text = value.toString(StandardCharsets.UTF_8);
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }

    /** @return the mode written in a key's value */
    static LockMode modeOf(ByteSequence value) {
        String line = firstLine(value);
        int space = line.indexOf(' ');
        return LockMode.valueOf((space < 0 ? line : line.substring(0, space)).toUpperCase(java.util.Locale.ROOT));
    }

    /** @return the token of the attempt that wrote a key's value ("" for a value without one) */
    static String tokenOf(ByteSequence value) {
        String line = firstLine(value);
        int space = line.indexOf(' ');
        return space < 0 ? "" : line.substring(space + 1);
    }

    /** @return the holder written in a key's value */
    static String holderOf(ByteSequence value) {
        String text = value.toString(StandardCharsets.UTF_8);
        int newline = text.indexOf('\n');
        return newline < 0 ? "" : text.substring(newline + 1);
    }

    /** @return the lock name of a key under {@code namespaceDirectory}, if it is one of ours */
    static Optional<String> nameOf(ByteSequence key, ByteSequence namespaceDirectory) {
        String text = key.toString(StandardCharsets.UTF_8);
        String directory = namespaceDirectory.toString(StandardCharsets.UTF_8);
        int slash = text.indexOf('/', directory.length());
        if (!text.startsWith(directory) || slash < 0 || text.startsWith(RECORDS + "/", directory.length())) {
            return Optional.empty();
        }
        return Optional.of(URLDecoder.decode(text.substring(directory.length(), slash), StandardCharsets.UTF_8));
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
