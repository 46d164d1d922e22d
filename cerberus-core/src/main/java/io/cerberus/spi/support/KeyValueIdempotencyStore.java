package io.cerberus.spi.support;

import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

/**
 * Idempotency records in a {@link KeyValueStore}: one entry per key, its value the record as text.
 * Every change reads the entry and writes it back only while it is unchanged
 * ({@link KeyValueStore#replaceIfEquals}, {@link KeyValueStore#deleteIfEquals}), so it is atomic and
 * owner-checked: an attempt whose lease ran out cannot complete or release the record of the
 * attempt that took over. A resent claim or completion of the owning token finds its own record
 * and answers as if sent once.
 *
 * <p>Record text: {@code P\ntoken\nfingerprint} while in progress, {@code C\ntoken\nfingerprint\nV|F\nbase64(result)}
 * once completed. Tokens and fingerprints hold no line break.
 */
final class KeyValueIdempotencyStore implements IdempotencyStore {
    /** Claims that lose a race to an entry that then expired before it could be read try again this often. */
    private static final int CLAIM_TRIES = 5;

    private final KeyValueStore store;

    KeyValueIdempotencyStore(KeyValueStore store) {
        this.store = store;
    }

    private static String entryKey(String id) {
        return "cerberus-idem:" + id;
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        String mine = "P\n" + token + "\n" + fingerprint;
        for (int i = 0; i < CLAIM_TRIES; i++) {
            if (store.putIfAbsent(entryKey(id), mine, store.expiryFor(lease))) {
                return Optional.empty();
            }
            Optional<IdempotencyRecord> existing = read(id);
            if (existing.isPresent()) {
                IdempotencyRecord record = existing.get();
                return !record.completed() && record.token().equals(token) ? Optional.empty() : existing;
            }
        }
        throw new io.cerberus.EngineUnavailableException(
                "idempotency record " + id + " on " + store.describe()
                        + " kept appearing and vanishing while it was claimed; try again",
                null);
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        Optional<String> text = store.get(entryKey(id));
        return text.filter(value -> owns(value, token, false)).isPresent()
                && store.replaceIfEquals(entryKey(id), text.get(), text.get(), store.expiryFor(lease));
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        Optional<String> text = store.get(entryKey(id));
        IdempotencyRecord record = text.map(KeyValueIdempotencyStore::decode).orElse(null);
        if (record == null || !record.token().equals(token)) {
            return false;
        }
        if (record.completed()) {
            return true; // a resent completion
        }
        String done = "C\n" + token + "\n" + record.fingerprint() + "\n" + (failure ? "F" : "V") + "\n"
                + Base64.getEncoder().encodeToString(result);
        return store.replaceIfEquals(
                entryKey(id), text.get(), done, retention == null ? KeyValueStore.FOREVER : store.expiryFor(retention));
    }

    @Override
    public boolean release(String id, String token) {
        Optional<String> text = store.get(entryKey(id));
        return text.filter(value -> owns(value, token, false)).isPresent()
                && store.deleteIfEquals(entryKey(id), text.get());
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        return store.get(entryKey(id)).map(KeyValueIdempotencyStore::decode);
    }

    @Override
    public int maxResultBytes() {
        // Base64 makes 4 characters of 3 bytes; the header is at most a few hundred characters
        return Math.max(0, (store.maxValueLength() - 1024) / 4 * 3);
    }

    @Override
    public Optional<Duration> maxRetention() {
        return store.longestExpiry();
    }

    private static boolean owns(String text, String token, boolean completed) {
        IdempotencyRecord record = decode(text);
        return record.completed() == completed && record.token().equals(token);
    }

    private static IdempotencyRecord decode(String text) {
        String[] fields = text.split("\n", 5);
        boolean completed = fields[0].equals("C");
        if (!(completed ? fields.length == 5 : fields.length == 3 && fields[0].equals("P"))) {
            throw new IllegalStateException("an idempotency record in the store is not one Cerberus wrote: it has "
                    + fields.length + " fields");
        }
        return completed
                ? new IdempotencyRecord(
                        true, fields[1], fields[2], Base64.getDecoder().decode(fields[4]), fields[3].equals("F"))
                : new IdempotencyRecord(false, fields[1], fields[2], null, false);
    }
}
