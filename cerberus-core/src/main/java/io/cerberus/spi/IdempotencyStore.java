package io.cerberus.spi;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

/**
 * Where an engine keeps idempotency records. Every change is atomic in the store, and every
 * change of an existing record is checked against the owning attempt's token: an attempt whose
 * lease ran out can neither complete nor release the record of the attempt that took over. A
 * record never outlives its lease (IN_PROGRESS) or its retention (COMPLETED, unless forever): the
 * claim and its expiry are one write. Failures to reach the store throw
 * {@link io.cerberus.EngineUnavailableException}.
 *
 * <p>Every change may be sent again by its caller after a lost answer, with the same token, and
 * must then answer as if it had been sent once: a claim resent by the token that owns the
 * IN_PROGRESS record is its own ({@code empty}), a completion resent by the token whose record is
 * completed succeeded ({@code true}). A renewal by the owner never makes its own completion or
 * release fail.
 */
public interface IdempotencyStore {

    /**
     * Creates an IN_PROGRESS record owned by {@code token} if none exists (or the existing one
     * expired).
     *
     * @param id the key's id
     * @param fingerprint the payload fingerprint
     * @param token the attempt's token
     * @param lease how long the record lives unless renewed or completed
     * @return empty if this attempt now owns the key (also when it already owned it: a resent
     *     claim); else the record that exists
     */
    Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease);

    /**
     * Extends the lease of an IN_PROGRESS record this token owns.
     *
     * @return false if the token no longer owns an IN_PROGRESS record
     */
    boolean renew(String id, String token, Duration lease);

    /**
     * Completes the record this token owns: stores the result and keeps it for the retention.
     *
     * @param retention how long to keep it; null for ever
     * @return true if the record is now completed by this token (also when an earlier send of this
     *     completion did it); false if the token no longer owns the record (nothing was written)
     */
    boolean complete(String id, String token, byte[] result, boolean failure, Duration retention);

    /**
     * Completes the record this token owns in the caller's transaction: the change {@link #complete}
     * makes, sent on {@code connection} and not committed, so it commits or rolls back with the
     * caller's effect. It checks the token and the IN_PROGRESS state, not the expiry: an attempt whose
     * lease ran out while nobody took the key over still completes it, and one whose key was taken
     * changes nothing (its caller must roll back). Not resent after a failure: a failed statement
     * spoils the caller's transaction, which must roll back.
     *
     * @param connection the caller's connection, in a transaction, to the database of this store
     * @param retention how long to keep the result; null for ever
     * @return true if the record is completed in that transaction; false if this token no longer owns
     *     an IN_PROGRESS record there (nothing was written)
     * @throws SQLException as the database reports a failure: the transaction must roll back
     * @throws UnsupportedOperationException if the store keeps its records elsewhere than in a SQL
     *     database ({@link #completesInTransactions()} is false)
     */
    default boolean completeInTransaction(
            Connection connection, String id, String token, byte[] result, boolean failure, Duration retention)
            throws SQLException {
        throw new UnsupportedOperationException("this store keeps its records apart from the caller's database");
    }

    /** @return true if the store keeps its records in a SQL database and implements {@link #completeInTransaction} */
    default boolean completesInTransactions() {
        return false;
    }

    /**
     * Deletes the IN_PROGRESS record this token owns, so the operation may run again.
     *
     * @return false if the token did not own it (nothing was deleted)
     */
    boolean release(String id, String token);

    /**
     * @return the largest result, in bytes, one record keeps; the guard stores a larger one as
     *     "ran, result not kept" instead of failing after the operation ran
     */
    default int maxResultBytes() {
        return Integer.MAX_VALUE - 1024;
    }

    /**
     * @return the longest retention this store keeps a result for (other than for ever), if it has
     *     a limit; the guard refuses a longer one before the operation runs
     */
    default Optional<Duration> maxRetention() {
        return Optional.empty();
    }

    /** @return the live record of this id, if any */
    Optional<IdempotencyRecord> read(String id);

    /**
     * Waits until the record of this id may have changed (completed, released, deleted) or the
     * time is up, whichever comes first; the caller reads the record again either way. Stores
     * that learn of changes (a watch, a notification) override this together with
     * {@link #notifiesChanges()}; the default sleeps the whole time.
     *
     * @param id the key's id
     * @param atMost how long to wait
     * @throws InterruptedException if the thread is interrupted
     */
    default void awaitChange(String id, Duration atMost) throws InterruptedException {
        Thread.sleep(Math.max(1, atMost.toMillis()));
    }

    /**
     * @return true if {@link #awaitChange} returns soon after a completion or release (not
     *     necessarily after an expiry), so a waiter need not poll
     */
    default boolean notifiesChanges() {
        return false;
    }
}
