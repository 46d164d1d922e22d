package io.cerberus.spi.support;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Pauses that double from a first pause up to a ceiling, each drawn at random from the upper half
 * of its step, so that waiters who found a lock busy together do not ask again together. One
 * instance serves one waiter and is not thread-safe.
 */
public final class Backoff {
    private final long maxNanos;
    private long ceilingNanos;

    /**
     * @param first the ceiling of the first pause
     * @param max the ceiling of every later pause
     * @throws IllegalArgumentException if either is not positive or {@code first} exceeds {@code max}
     */
    public Backoff(Duration first, Duration max) {
        if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
            throw new IllegalArgumentException("a backoff needs 0 < first <= max, was first " + first + ", max " + max);
        }
        this.ceilingNanos = first.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** @return the next pause, between half its ceiling and the ceiling; the ceiling then doubles, up to the max */
    public Duration next() {
        return next(Duration.ofNanos(maxNanos));
    }

    /**
     * As {@link #next()}, with this pause's ceiling lowered to {@code bound} when that is less (a
     * holder's lease that ends sooner, say); the pause is still drawn from the upper half.
     *
     * @param bound the highest ceiling for this pause; not negative
     * @return the next pause
     */
    public Duration next(Duration bound) {
        long ceiling = Math.min(ceilingNanos, Math.max(0, bound.toNanos()));
        ceilingNanos = Math.min(maxNanos, ceilingNanos * 2);
        return Duration.ofNanos(ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1));
    }
}
