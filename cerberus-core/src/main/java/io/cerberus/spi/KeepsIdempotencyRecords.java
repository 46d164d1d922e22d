package io.cerberus.spi;

/** An optional ability of a {@link LockEngine}: a store for the idempotency guard's records. */
public interface KeepsIdempotencyRecords {

    /** @return the engine's idempotency store (see {@link IdempotencyStore}) */
    IdempotencyStore idempotencyStore();
}
