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
     * The lock is now held by the attempt.
     *
     * @param fencingToken the fencing token, or -1 if the engine has none
     */
    record Granted(long fencingToken) implements AcquireResult {
    }

    /**
     * The lock is held by someone else, or other waiters come first.
     *
     * @param retryWithin the longest to wait before trying again
     */
    record Busy(Duration retryWithin) implements AcquireResult {
        /** Checks for {@code null} and negative durations. */
        public Busy {
            Objects.requireNonNull(retryWithin, "retryWithin");
            if (retryWithin.isNegative()) {
                throw new IllegalArgumentException("retryWithin must not be negative");
            }
        }
    }
}
