package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.UnsafeEngineException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test engine {@code switchable:NAME}: the mem: store NAME, which a test can take down (every call
 * then fails with {@link EngineUnavailableException}, as an unreachable server would) and bring
 * back with {@link #down(String, boolean)}. {@link #silentSlack(String, Duration)} makes it keep a
 * silent holder's lock longer than its lease, as a server that raised a session or TTL would.
 * {@link #unsafe(String, boolean)} makes opening it fail as a server set up against a guarantee does;
 * {@link #without(String, Capability...)} takes fair or read-write locks away from it.
 */
public final class SwitchableEngineProvider implements EngineProvider {
    private static final Map<String, Boolean> DOWN = new ConcurrentHashMap<>();
    private static final Map<String, Duration> SLACK = new ConcurrentHashMap<>();
    private static final Map<String, Boolean> UNSAFE = new ConcurrentHashMap<>();
    private static final Map<String, java.util.concurrent.atomic.AtomicInteger> READS = new ConcurrentHashMap<>();
    private static final Map<String, java.util.concurrent.atomic.AtomicInteger> CLOSED = new ConcurrentHashMap<>();
    private static final Map<String, java.util.concurrent.atomic.AtomicInteger> REFUSED = new ConcurrentHashMap<>();
    private static final Map<String, Set<Capability>> WITHOUT = new ConcurrentHashMap<>();

    /** Takes the store NAME down or brings it back, for every engine open on it. */
    public static void down(String name, boolean down) {
        DOWN.put(name, down);
    }

    /** @return how many {@code isLocked} reads (health checks among them) the engines on store NAME were asked */
    public static int reads(String name) {
        return counter(READS, name).get();
    }

    /** @return how many calls the engines on store NAME failed because it was down */
    public static int refused(String name) {
        return counter(REFUSED, name).get();
    }

    /** @return how many engines on store NAME were closed */
    public static int closed(String name) {
        return counter(CLOSED, name).get();
    }

    private static java.util.concurrent.atomic.AtomicInteger counter(
            Map<String, java.util.concurrent.atomic.AtomicInteger> counters, String name) {
        return counters.computeIfAbsent(name, n -> new java.util.concurrent.atomic.AtomicInteger());
    }

    /** Makes opening an engine on store NAME fail with {@link UnsafeEngineException}, or stop doing so. */
    /** Makes the engines of store NAME lack fair or read-write locks: they say so, and refuse such an acquisition. */
    public static void without(String name, Capability... missing) {
        WITHOUT.put(name, Set.of(missing));
    }

    public static void unsafe(String name, boolean unsafe) {
        UNSAFE.put(name, unsafe);
    }

    /** Makes the engines of store NAME report a silent-holder expiry of the lease plus {@code slack} (zero: the lease). */
    public static void silentSlack(String name, Duration slack) {
        SLACK.put(name, slack);
    }

    @Override
    public Set<String> schemes() {
        return Set.of("switchable");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return MemoryEngineProvider.CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        String name = context.uri().substring("switchable:".length());
        if (DOWN.getOrDefault(name, false)) {
            throw new EngineUnavailableException("engine " + context.uri() + " is down", null);
        }
        if (UNSAFE.getOrDefault(name, false)) {
            throw new UnsafeEngineException("engine " + context.uri() + " is set up against a guarantee");
        }
        return new Switchable(
                context.uri(), name, new MemoryEngine(context.uri(), MemoryStore.named("switchable-" + name)));
    }

    private record Switchable(String uri, String name, MemoryEngine inner) implements LockEngine, Inspects {

        private void reachable() {
            if (DOWN.getOrDefault(name, false)) {
                counter(REFUSED, name).incrementAndGet();
                throw new EngineUnavailableException("engine " + uri + " is down", null);
            }
        }

        @Override
        public String describe() {
            return uri;
        }

        @Override
        public Set<Capability> capabilities() {
            Set<Capability> capabilities = java.util.EnumSet.copyOf(inner.capabilities());
            capabilities.removeAll(WITHOUT.getOrDefault(name, Set.of()));
            return capabilities;
        }

        @Override
        public AcquireResult tryAcquire(Acquisition attempt) {
            reachable();
            Optional<Capability> missing =
                    attempt.mode().capability().filter(needed -> !capabilities().contains(needed));
            if (missing.isPresent()) {
                throw new UnsupportedCapabilityException(
                        "switchable:" + name + " has no " + missing.get().description());
            }
            return inner.tryAcquire(attempt);
        }

        @Override
        public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
            reachable();
            inner.awaitChange(attempt, max);
        }

        @Override
        public void abandon(Acquisition attempt) {
            reachable();
            inner.abandon(attempt);
        }

        @Override
        public boolean renew(Acquisition attempt) {
            reachable();
            return inner.renew(attempt);
        }

        @Override
        public boolean release(Acquisition attempt) {
            reachable();
            return inner.release(attempt);
        }

        @Override
        public boolean isLocked(LockKey key) {
            counter(READS, name).incrementAndGet();
            reachable();
            return inner.isLocked(key);
        }

        /** Warns of what it is, as an engine warns of a setting the user accepted. */
        @Override
        public List<String> checkHealth(LockKey probe) {
            isLocked(probe);
            return List.of("switchable:" + name + " is a test engine");
        }

        @Override
        public Optional<Duration> silentHolderExpiry(Duration lease) {
            return Optional.of(lease.plus(SLACK.getOrDefault(name, Duration.ZERO)));
        }

        @Override
        public List<LockInfo> inspect(String namespace, String prefix) {
            reachable();
            return inner.ability(Inspects.class).orElseThrow().inspect(namespace, prefix);
        }

        @Override
        public void close() {
            counter(CLOSED, name).incrementAndGet();
            inner.close();
        }
    }
}
