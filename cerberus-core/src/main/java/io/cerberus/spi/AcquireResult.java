package io.cerberus.spi;

import java.time.Duration;
import java.util.Objects;

/** What one {@link LockEngine#tryAcquire} answered: granted with a fencing token, or busy. */
public sealed interface AcquireResult {

    /**
     * @param fencingToken the fencing token of this acquisition, or -1 if the engine has none
     * @return a granted result
     */
    static AcquireResult granted(long fencingToken) {
        return new Granted(fencingToken);
    }

    /**
     * @param retryWithin the longest the caller should wait before trying again even if no change
     *     is signalled: typically the remaining lease of the holder, since an expiry signals nothing
     * @return a busy result
     */
    static AcquireResult busy(Duration retryWithin) {
        return new Busy(retryWithin);
    }

    /**
     * A busy answer that names the holder, as far as the engine read it. The core uses it for
     * engines that {@link LinesUpLocally line up waiters locally}: a holder that is a live hold of
     * the same client makes the waiters wait for that hold's release instead of asking again; a
     * holder of another client with a new fencing token shows the lock changing hands there.
     *
     * @param retryWithin as {@link #busy(Duration)}
     * @param holder the holder's token, or null if not known
     * @param holderFence the holder's fencing token, or -1 if not known
     * @return a busy result
     */
    static AcquireResult busy(Duration retryWithin, String holder, long holderFence) {
        return new Busy(retryWithin, holder, holderFence);
    }

    /**
     * A grant whose lease began before this call: the request that took the lock for the attempt
     * was sent {@code ageNanos} before the answer (an engine that handed the lock over to a waiting
     * attempt in the holder's release, say). The caller counts the lease from then.
     *
     * @param fencingToken the fencing token, or -1 if the engine has none
     * @param ageNanos how long before now the granting request was sent; not negative
     * @return a granted result
     */
    static AcquireResult granted(long fencingToken, long ageNanos) {
        return new Granted(fencingToken, ageNanos);
    }

    /**
     * The lock is now held by the attempt.
     *
     * @param fencingToken the fencing token, or -1 if the engine has none
     * @param ageNanos how long before this answer the request that granted the lock was sent, when
     *     that was before this call; 0 when this call sent it
     */
    record Granted(long fencingToken, long ageNanos) implements AcquireResult {
        /** Checks that the age is not negative. */
        public Granted {
            if (ageNanos < 0) {
                throw new IllegalArgumentException("ageNanos must not be negative, was " + ageNanos);
            }
        }

        /** @param fencingToken the fencing token, or -1 if the engine has none */
        public Granted(long fencingToken) {
            this(fencingToken, 0);
        }
    }

    /**
     * The lock is held by someone else, or other waiters come first.
     *
     * @param retryWithin the longest to wait before trying again
     * @param holder the holder's token, or null if the engine did not read it
     * @param holderFence the holder's fencing token, or -1 if the engine did not read it
     */
    record Busy(Duration retryWithin, String holder, long holderFence) implements AcquireResult {
        /** Checks for {@code null} and negative durations. */
        public Busy {
            Objects.requireNonNull(retryWithin, "retryWithin");
            if (retryWithin.isNegative()) {
                throw new IllegalArgumentException("retryWithin must not be negative");
            }
        }

        /** @param retryWithin the longest to wait before trying again; the holder is not named */
        public Busy(Duration retryWithin) {
            this(retryWithin, null, -1);
        }
    }
}
