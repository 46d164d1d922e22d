package io.cerberus.local;

import io.cerberus.spi.IdempotencyStore;

/** Gives tests the mem: idempotency store of an engine URI, to act as a second party. */
public final class MemoryIdempotencyStoreAccess {
    private MemoryIdempotencyStoreAccess() {}

    public static IdempotencyStore of(String uri) {
        return MemoryIdempotencyStore.named(uri);
    }
}
