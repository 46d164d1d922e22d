package io.cerberus.idempotency;

import io.cerberus.local.MemoryIdempotencyStoreAccess;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/** A mem: store of its own whose calls a test may slow down, fail or watch by overriding them. */
class HookedIdempotencyStore implements IdempotencyStore {

    final IdempotencyStore inner = MemoryIdempotencyStoreAccess.of("mem:hooked-" + UUID.randomUUID());

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        return inner.claim(id, fingerprint, token, lease);
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        return inner.renew(id, token, lease);
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        return inner.complete(id, token, result, failure, retention);
    }

    @Override
    public boolean release(String id, String token) {
        return inner.release(id, token);
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        return inner.read(id);
    }
}
