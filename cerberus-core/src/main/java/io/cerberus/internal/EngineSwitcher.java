package io.cerberus.internal;

import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineSwitchListener;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Which of a client's engines new acquisitions go to, and the lock-delay after a switch.
 *
 * <p>After a switch away from an engine, and until the longest lease this client has been granted
 * there has passed (or the longer time the engine keeps a silent holder's lock, a session or TTL
 * the server raised; at least the default lease; or the lock delay the builder was given), a new
 * acquisition is also taken on that old engine: holders that have not switched (other hosts, or
 * holds taken before the switch) keep excluding the new holder while the old engine can still be
 * reached; while it cannot be, new acquisitions wait for its lock-delay to end, by when every
 * lease it granted has run out (the lock-delay of Chubby). Switching back to an engine ends its
 * lock-delay.
 */
final class EngineSwitcher {
    private static final System.Logger LOG = System.getLogger(EngineSwitcher.class.getName());

    private final List<EngineHandle> engines;
    private final Duration defaultLease;
    /** The fixed lock-delay, or null to derive it from the leases granted. */
    private final Duration lockDelay;

    private final Epochs epochs;

    private final List<EngineSwitchListener> listeners = new CopyOnWriteArrayList<>();
    /** The longest lease granted per engine name, in nanoseconds. */
    private final Map<String, Long> longestLease = new ConcurrentHashMap<>();
    /** Old engines still in their lock-delay, with the end of their lock-delay on the monotonic clock; guarded by this. */
    private final List<OldEngineInLockDelay> inLockDelay = new ArrayList<>();

    private volatile EngineHandle current;
    private long switches;

    /** An old engine in its lock-delay, until {@code untilNanos} on the monotonic clock. */
    record OldEngineInLockDelay(EngineHandle engine, long untilNanos) {}

    EngineSwitcher(List<EngineHandle> engines, Duration defaultLease, Duration lockDelay, Epochs epochs) {
        this.engines = List.copyOf(engines);
        this.epochs = epochs;
        this.defaultLease = defaultLease;
        this.lockDelay = lockDelay;
        this.current = engines.get(0);
    }

    EngineHandle current() {
        return current;
    }

    EngineHandle primary() {
        return engines.get(0);
    }

    List<EngineHandle> engines() {
        return engines;
    }

    EngineHandle named(String name) {
        Arguments.notNull("engine name", name);
        for (EngineHandle engine : engines) {
            if (engine.name().equals(name)) {
                return engine;
            }
        }
        throw new IllegalArgumentException("no engine named '" + name + "' in this client; its engines are " + names());
    }

    List<String> names() {
        return engines.stream().map(EngineHandle::name).toList();
    }

    void addListener(EngineSwitchListener listener) {
        listeners.add(Arguments.notNull("listener", listener));
    }

    /** Notes a grant, so a later switch away from this engine keeps its lock-delay long enough. */
    void granted(EngineHandle engine, Duration lease) {
        longestLease.merge(engine.name(), lease.toNanos(), Math::max);
    }

    /** @return the old engines whose lock-delay is running, oldest switch first */
    synchronized List<OldEngineInLockDelay> inLockDelay() {
        if (inLockDelay.isEmpty()) {
            return List.of();
        }
        long now = System.nanoTime();
        inLockDelay.removeIf(old -> now - old.untilNanos >= 0);
        return List.copyOf(inLockDelay);
    }

    /** Switches to the engine after the current one, in the order they were added. */
    EngineHandle switchToNext(EngineSwitchEvent.Reason reason, String why) {
        EngineHandle from = current;
        return switchTo(engines.get((engines.indexOf(from) + 1) % engines.size()), reason, why);
    }

    /**
     * Makes {@code to} the engine of new acquisitions. Switching to the current engine does nothing.
     *
     * @return the engine now in use
     */
    EngineHandle switchTo(EngineHandle to, EngineSwitchEvent.Reason reason, String why) {
        EngineSwitchEvent event;
        synchronized (this) {
            EngineHandle from = current;
            if (from == to) {
                return to;
            }
            long now = System.nanoTime();
            inLockDelay.removeIf(old -> old.engine == to || old.engine == from || now - old.untilNanos >= 0);
            Duration delay = lockDelay(from);
            if (!delay.isZero()) {
                inLockDelay.add(new OldEngineInLockDelay(from, now + delay.toNanos()));
            }
            epochs.switchingTo(to, engines.indexOf(to), engines.size()); // before any grant there
            current = to;
            switches++;
            event = new EngineSwitchEvent(from.name(), to.name(), reason, switches, Instant.now());
            LOG.log(
                    reason == EngineSwitchEvent.Reason.MANUAL ? Level.INFO : Level.WARNING,
                    "Cerberus " + event + (why == null ? "" : ": " + why) + "; new acquisitions go to " + to.uri()
                            + (delay.isZero()
                                    ? ""
                                    : " and, for the next " + Durations.format(delay) + " (lock-delay), also to "
                                            + from.uri() + " while it can be reached"));
        }
        for (EngineSwitchListener listener : listeners) {
            try {
                listener.switched(event);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "engine switch listener " + listener + " failed on " + event, e);
            }
        }
        return to;
    }

    private Duration lockDelay(EngineHandle from) {
        if (lockDelay != null) {
            return lockDelay;
        }
        Long granted = longestLease.get(from.name());
        long longest = Math.max(defaultLease.toNanos(), granted == null ? 0L : granted);
        if (granted != null) {
            // the engine may keep a silent holder's lock longer than its lease (a session or TTL the server raised):
            // asked here, once per switch, not on every grant
            longest = Math.max(
                    longest,
                    from.engine()
                            .silentHolderExpiry(Duration.ofNanos(longest))
                            .map(Duration::toNanos)
                            .orElse(0L));
        }
        return Duration.ofNanos(longest);
    }
}
