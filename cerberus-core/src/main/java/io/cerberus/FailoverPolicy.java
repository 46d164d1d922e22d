package io.cerberus;

import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.Optional;

/**
 * Automatic failover of a client with several engines (opt-in, see
 * {@link CerberusBuilder#failover(FailoverPolicy)}): every engine is health-checked; when the
 * current engine has failed its checks for {@link #unhealthyFor()}, new acquisitions move to the
 * next engine, in the order they were added, that passes its checks. The client moves back to the
 * primary (the first engine) only when asked, or by itself when {@link #failBackAfter(Duration)}
 * was set and the primary has passed its checks for that long. Immutable.
 *
 * <pre>{@code
 * Cerberus.builder()
 *         .engine("redis://redis:6379")
 *         .engine("zk://zk1:2181")
 *         .failover(FailoverPolicy.after(Duration.ofSeconds(5)).checkEvery(Duration.ofSeconds(1)))
 *         .build();
 * }</pre>
 */
public final class FailoverPolicy {
    /** Default time between two health checks of an engine. */
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);

    private final Duration unhealthyFor;
    private final Duration checkEvery;
    private final Duration failBackAfter;

    private FailoverPolicy(Duration unhealthyFor, Duration checkEvery, Duration failBackAfter) {
        this.unhealthyFor = unhealthyFor;
        this.checkEvery = checkEvery;
        this.failBackAfter = failBackAfter;
    }

    /**
     * A policy that switches once no health check of the current engine has passed for this long
     * (a check that hangs does not pass).
     *
     * @param unhealthyFor at least 10 ms; shorter switches sooner, longer rides out brief outages
     *     (a failover of the engine's own replicas) without moving every lock to another engine
     * @return the policy, checking every second and never failing back by itself
     * @throws IllegalArgumentException if the duration is null or shorter than 10 ms
     */
    public static FailoverPolicy after(Duration unhealthyFor) {
        return new FailoverPolicy(atLeast10ms("unhealthy time", unhealthyFor), DEFAULT_CHECK_INTERVAL, null);
    }

    /**
     * @param interval time between two health checks of an engine; at least 10 ms
     * @return a copy checking at this interval
     * @throws IllegalArgumentException if the interval is null or shorter than 10 ms
     */
    public FailoverPolicy checkEvery(Duration interval) {
        return new FailoverPolicy(unhealthyFor, atLeast10ms("health check interval", interval), failBackAfter);
    }

    /**
     * @param healthyFor how long the primary must pass its checks before the client moves back to
     *     it by itself; at least 10 ms
     * @return a copy that fails back
     * @throws IllegalArgumentException if the duration is null or shorter than 10 ms
     */
    public FailoverPolicy failBackAfter(Duration healthyFor) {
        return new FailoverPolicy(unhealthyFor, checkEvery, atLeast10ms("fail-back time", healthyFor));
    }

    /** @return how long the current engine must fail its checks before the client switches */
    public Duration unhealthyFor() {
        return unhealthyFor;
    }

    /** @return the time between two health checks of an engine */
    public Duration checkEvery() {
        return checkEvery;
    }

    /** @return how long the primary must pass its checks before the client fails back, if it does */
    public Optional<Duration> failBackAfter() {
        return Optional.ofNullable(failBackAfter);
    }

    private static Duration atLeast10ms(String what, Duration duration) {
        Arguments.notNull(what, duration);
        if (duration.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException(what + " must be at least 10ms, was " + Durations.format(duration));
        }
        return duration;
    }

    @Override
    public String toString() {
        return "FailoverPolicy[after " + Durations.format(unhealthyFor) + " unhealthy, checks every "
                + Durations.format(checkEvery)
                + (failBackAfter == null
                        ? ", no fail-back"
                        : ", fail-back after " + Durations.format(failBackAfter) + " healthy")
                + "]";
    }
}
