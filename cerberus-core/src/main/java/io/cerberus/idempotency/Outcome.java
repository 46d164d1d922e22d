package io.cerberus.idempotency;

/**
 * What a guarded call did.
 *
 * @param value the result: this call's, or the first attempt's replayed
 * @param status whether the operation ran here, was replayed, or ran without the guard
 * @param <T> the result type
 */
public record Outcome<T>(T value, Status status) {

    /** Whether the operation ran. */
    public enum Status {
        /** It ran here, once, and its result is stored for duplicates. */
        EXECUTED,
        /** A duplicate: it did not run; the value is the first attempt's. */
        REPLAYED,
        /** The store was unreachable and the guard fails open: it ran without protection (counted, logged). */
        UNGUARDED
    }

    /** @return whether the operation ran in this call */
    public boolean executed() {
        return status != Status.REPLAYED;
    }
}
