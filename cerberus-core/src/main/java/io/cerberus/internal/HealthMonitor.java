package io.cerberus.internal;

import io.cerberus.EngineSwitchEvent;
import io.cerberus.FailoverPolicy;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Automatic failover: one thread per engine checks it every {@link FailoverPolicy#checkEvery()}
 * (a monitoring read of a probe name, {@code isLocked}), and one thread decides. When the current
 * engine has not passed a check for {@link FailoverPolicy#unhealthyFor()}, new acquisitions move
 * to the next engine whose last check passed; a check that hangs counts as failing. With
 * fail-back, the client returns to the primary once it has passed every check for that long.
 */
final class HealthMonitor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HealthMonitor.class.getName());
    /** The name probed on every engine; a monitoring read, it takes no lock. */
    static final String PROBE_NAME = "cerberus.health-check";

    private final EngineSwitcher switcher;
    private final FailoverPolicy policy;
    private final LockKey probe;
    private final List<Health> health = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean closed;
    private boolean warnedNoneHealthy;

    /** What the checks of one engine found, on the monotonic clock. */
    private static final class Health {
        final EngineHandle engine;
        volatile long lastPassedNanos;
        /** Start of the current run of passed checks; valid only while {@link #passing}. */
        volatile long passingSinceNanos;

        volatile boolean passing = true;
        volatile String lastFailure = "";

        Health(EngineHandle engine, long now) {
            this.engine = engine;
            this.lastPassedNanos = now;
            this.passingSinceNanos = now;
        }
    }

    HealthMonitor(EngineSwitcher switcher, FailoverPolicy policy, String namespace, String clientName) {
        this.switcher = switcher;
        this.policy = policy;
        this.probe = new LockKey(namespace, PROBE_NAME);
        long now = System.nanoTime();
        for (EngineHandle engine : switcher.engines()) {
            Health h = new Health(engine, now);
            health.add(h);
            threads.add(daemon(() -> checkLoop(h), "cerberus-health-" + clientName + "-" + engine.name()));
        }
        threads.add(daemon(this::decideLoop, "cerberus-failover-" + clientName));
        threads.forEach(Thread::start);
    }

    private static Thread daemon(Runnable body, String name) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    private void checkLoop(Health h) {
        while (!closed) {
            long started = System.nanoTime();
            try {
                h.engine.engine().isLocked(probe);
                if (!h.passing) {
                    h.passingSinceNanos = started;
                    h.passing = true;
                    LOG.log(
                            Level.INFO,
                            "engine '" + h.engine.name() + "' (" + h.engine.uri() + ") passes its health checks again");
                }
                h.lastPassedNanos = System.nanoTime();
            } catch (RuntimeException e) {
                if (h.passing) {
                    LOG.log(
                            Level.WARNING,
                            "engine '" + h.engine.name() + "' (" + h.engine.uri() + ") failed a health check: "
                                    + e.getMessage());
                }
                h.passing = false;
                h.lastFailure = String.valueOf(e.getMessage());
            }
            pause(policy.checkEvery().toNanos());
        }
    }

    private void decideLoop() {
        long interval =
                Math.max(TimeUnit.MILLISECONDS.toNanos(5), policy.checkEvery().toNanos() / 2);
        while (!closed) {
            try {
                decide(System.nanoTime());
            } catch (RuntimeException e) {
                LOG.log(
                        Level.WARNING,
                        "failover decision failed; trying again in " + TimeUnit.NANOSECONDS.toMillis(interval) + "ms",
                        e);
            }
            pause(interval);
        }
    }

    private void decide(long now) {
        Health current = healthOf(switcher.current());
        long unhealthy = policy.unhealthyFor().toNanos();
        if (now - current.lastPassedNanos >= unhealthy) {
            Health next = nextHealthy(current, now, unhealthy);
            if (next == null) {
                if (!warnedNoneHealthy) {
                    LOG.log(
                            Level.WARNING,
                            "engine '" + current.engine.name() + "' has failed its health checks for "
                                    + Durations.format(policy.unhealthyFor())
                                    + " but no other engine passes them; staying on it");
                    warnedNoneHealthy = true;
                }
                return;
            }
            warnedNoneHealthy = false;
            switcher.switchTo(
                    next.engine,
                    EngineSwitchEvent.Reason.FAILOVER,
                    "engine '" + current.engine.name() + "' failed its health checks for "
                            + Durations.format(policy.unhealthyFor()) + " (last: " + current.lastFailure + ")");
            return;
        }
        if (policy.failBackAfter().isPresent() && current.engine != switcher.primary()) {
            Health primary = healthOf(switcher.primary());
            if (primary.passing
                    && now - primary.lastPassedNanos < unhealthy
                    && now - primary.passingSinceNanos
                            >= policy.failBackAfter().get().toNanos()) {
                switcher.switchTo(
                        primary.engine,
                        EngineSwitchEvent.Reason.FAILBACK,
                        "the primary engine passed its health checks for "
                                + Durations.format(policy.failBackAfter().get()));
            }
        }
    }

    private Health nextHealthy(Health from, long now, long unhealthy) {
        int start = health.indexOf(from);
        for (int i = 1; i < health.size(); i++) {
            Health candidate = health.get((start + i) % health.size());
            if (candidate.passing && now - candidate.lastPassedNanos < unhealthy) {
                return candidate;
            }
        }
        return null;
    }

    /** @return whether the engine passed its last health check, within the unhealthy time */
    boolean passing(EngineHandle engine) {
        Health h = healthOf(engine);
        return h.passing
                && System.nanoTime() - h.lastPassedNanos < policy.unhealthyFor().toNanos();
    }

    private Health healthOf(EngineHandle engine) {
        for (Health h : health) {
            if (h.engine == engine) {
                return h;
            }
        }
        throw new IllegalStateException("engine '" + engine.name() + "' is not monitored");
    }

    private void pause(long nanos) {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0 && !closed; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(this, left);
        }
    }

    @Override
    public void close() {
        closed = true;
        threads.forEach(LockSupport::unpark);
    }
}
