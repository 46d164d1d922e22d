package io.cerberus.spi;

import java.util.Objects;

/**
 * What an idempotency store holds for one key.
 *
 * @param completed false while the first attempt runs (IN_PROGRESS, under a lease), true once it
 *     completed (kept for the retention window)
 * @param token the owning attempt's random token
 * @param fingerprint the payload fingerprint the key was first used with
 * @param result the stored result (completed only), encoded by the caller's codec
 * @param failure whether the stored result is a remembered failure, not a value
 */
public record IdempotencyRecord(boolean completed, String token, String fingerprint, byte[] result, boolean failure) {
    public IdempotencyRecord {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(fingerprint, "fingerprint");
    }
}
