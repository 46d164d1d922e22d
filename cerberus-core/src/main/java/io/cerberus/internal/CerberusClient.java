package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.DistributedSemaphore;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineSwitchListener;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Leadership;
import io.cerberus.Lease;
import io.cerberus.LockContention;
import io.cerberus.LockInfo;
import io.cerberus.MultiLock;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.ReleasesByForce;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Redaction;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The {@link Cerberus} client, its front: the engines (opened here, closed with the client), the
 * locks and guards it hands out, reentrancy of thread-bound holds, inspection and switching. New
 * holds are taken by its {@link Acquirer}; holds not yet released live in its {@link LiveHolds}.
 *
 * <p>Invariants: a thread-bound hold is in the thread map from its grant until its last
 * {@code unlock()}, counted there ({@code holdCount}, {@code nestedReads}) so that a reentry sends
 * nothing; after {@link #close()} every call but {@code close} throws {@link IllegalStateException}.
 */
public final class CerberusClient implements Cerberus {
    private static final System.Logger LOG = System.getLogger(CerberusClient.class.getName());
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final ClientSettings settings;
    private final List<EngineHandle> engines;
    private final EngineSwitcher switcher;
    private final Epochs epochs;
    private final HealthMonitor health;
    private final SafeMetrics metrics;
    /** The waits of contended acquisitions, per lock name. */
    final Contention contention = new Contention();
    /** Renews the leases of every guard's running attempts: one thread per client, made at the first guard. */
    private java.util.concurrent.ScheduledExecutorService idempotencyRenewer;

    private final LeaseRenewer renewer;
    private final LeaseEvents events;
    /** The threads of async calls. */
    final AsyncWork async;
    /** The holds of this client not yet released, and the lines of its waiters. */
    final LiveHolds holds = new LiveHolds();
    /** Takes new holds. */
    final Acquirer acquirer;
    /** Thread-bound holds. */
    private final Map<ThreadHoldKey, Holding> threadHolds = new ConcurrentHashMap<>();
    /** What this client knows of the slots of the semaphores it uses now. */
    private final Map<SlotsKey, LocalSlots> semaphoreSlots = new ConcurrentHashMap<>();

    private record SlotsKey(String semaphore, int permits) {}

    private volatile boolean closed;

    private record ThreadHoldKey(LockKey key, boolean shared, Thread thread) {}

    /**
     * @param settings checked settings
     * @param engineSpecs the engines, the primary first
     */
    public CerberusClient(ClientSettings settings, List<EngineSpec> engineSpecs) {
        this.settings = settings;
        String clientName = String.valueOf(CLIENTS.incrementAndGet());
        List<EngineHandle> opened = new ArrayList<>();
        LossReporter reporter = holds.reporter();
        try {
            for (EngineSpec spec : engineSpecs) {
                EngineContext context = new EngineContext(
                        spec.uri(), settings.connectTimeout(), reporter, spec.options(), settings.defaultLease());
                if (opened.isEmpty()) {
                    opened.add(EngineHandle.of(spec.name(), EngineRegistry.open(context)));
                    continue;
                }
                // a standby that is down now must not keep the client from starting on its primary
                try {
                    opened.add(EngineHandle.of(spec.name(), EngineRegistry.open(context)));
                } catch (EngineUnavailableException e) {
                    LOG.log(
                            Level.WARNING,
                            "standby engine '" + spec.name() + "' (" + Redaction.redact(spec.uri())
                                    + ") cannot be reached; starting without it, and trying it again when it is used or checked: "
                                    + e.getMessage());
                    opened.add(EngineHandle.of(
                            spec.name(),
                            new DeferredEngine(context, EngineRegistry.declaredCapabilities(spec.uri()), e)));
                }
            }
        } catch (RuntimeException e) {
            opened.forEach(handle -> closeQuietly(handle));
            throw e;
        }
        this.engines = List.copyOf(opened);
        this.epochs = new Epochs(settings.namespace());
        this.switcher = new EngineSwitcher(engines, settings.defaultLease(), settings.lockDelay(), epochs);
        this.metrics = SafeMetrics.of(settings.metrics());
        switcher.addListener(metrics::engineSwitch);
        this.renewer = new LeaseRenewer(clientName);
        this.events = new LeaseEvents(clientName);
        this.health = settings.failover() == null || engines.size() < 2
                ? null
                : new HealthMonitor(switcher, settings.failover(), settings.namespace(), clientName);
        this.async = new AsyncWork(clientName);
        this.acquirer = new Acquirer(this, settings, engines.size(), switcher, health, metrics, renewer, holds, async);
    }

    @Override
    public DistributedLock lock(String name) {
        return new LockView(this, key(name), LockMode.EXCLUSIVE);
    }

    @Override
    public DistributedLock fairLock(String name) {
        LockKey key = key(name);
        switcher.current().require(Capability.FAIR);
        return new LockView(this, key, LockMode.FAIR);
    }

    @Override
    public boolean runExclusively(String name, Duration atLeast, Consumer<Lease> task) {
        LockView lock = new LockView(this, key(name), LockMode.EXCLUSIVE);
        Arguments.notNull("task", task);
        Arguments.notNull("atLeast", atLeast);
        if (atLeast.isNegative()) {
            throw new IllegalArgumentException("atLeast must not be negative, was " + atLeast);
        }
        long keepNanos = Checks.nanos(atLeast);
        Holding holding;
        try {
            holding = acquirer.acquire(AcquireRequest.startingNow(lock, defaultLease(), true, 0, false, false));
        } catch (InterruptedException e) {
            throw new AssertionError("a try without a wait was interrupted", e);
        }
        if (holding == null) {
            LOG.log(Level.DEBUG, () -> "skipped run '" + name + "': another instance holds its lock");
            metrics.skippedRun(switcher.current(), name);
            return false;
        }
        long began = System.nanoTime();
        try {
            task.accept(holding);
        } finally {
            long left = keepNanos - (System.nanoTime() - began);
            if (left > 0 && holding.isValid()) {
                // kept for the time left, renewed, and released then; a crash frees it after the lease
                async.schedule(() -> async.execute(() -> releaseKept(holding)), left);
            } else {
                holding.release();
            }
        }
        return true;
    }

    private static void releaseKept(Holding holding) {
        try {
            holding.release();
        } catch (RuntimeException e) {
            LOG.log(Level.INFO, "the lock of run '" + holding.lockName() + "', kept after the run: " + e.getMessage());
        }
    }

    @Override
    public boolean forceRelease(String name, long fencingToken) {
        return forceRelease(key(name), fencingToken, "lock '" + name + "'");
    }

    /**
     * Frees the hold of {@code key} with {@code fencingToken} on the current engine, as
     * {@link #forceRelease(String, long)} describes.
     *
     * @param what the hold as people name it, for messages ("lock 'x'", "permit 2 of semaphore 'y'")
     */
    boolean forceRelease(LockKey key, long fencingToken, String what) {
        ensureOpen();
        EngineHandle engine = switcher.current();
        engine.require(Capability.FENCING);
        ReleasesByForce forcing = engine.engine()
                .ability(ReleasesByForce.class)
                .orElseThrow(() -> new UnsupportedCapabilityException("engine '" + engine.name() + "' ("
                        + engine.uri() + ") cannot free a lock held by another process"
                        + " (its holds are bound to the holder's connection or process: stop that process instead)"));
        String holder = engine.has(Capability.INSPECT)
                ? inspect(key.name()).stream()
                        .filter(info -> info.name().equals(key.name()) && info.fencingToken() == fencingToken)
                        .map(LockInfo::holder)
                        .findFirst()
                        .orElse("no longer listed")
                : "not listed by this engine";
        boolean freed = forcing.forceRelease(key, fencingToken);
        LOG.log(
                freed ? Level.WARNING : Level.INFO,
                what + " (fencing token " + fencingToken + ", held by " + holder + ") "
                        + (freed
                                ? "freed by force"
                                : "not freed: no hold with that token (released, or it changed hands)")
                        + " on engine '" + engine.name() + "' by " + HolderIdentity.describeCurrentThread());
        return freed;
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        return new SemaphoreView(this, key(name).name(), SemaphoreView.checkPermits(permits));
    }

    /** @return the slots of a semaphore as this client knows them, counting one more user of them */
    LocalSlots enterSlots(String semaphore, int permits) {
        return semaphoreSlots.compute(new SlotsKey(semaphore, permits), (key, slots) -> {
            LocalSlots entered = slots == null ? new LocalSlots(permits) : slots;
            entered.users++;
            return entered;
        });
    }

    /** Counts one user fewer of a semaphore's slots; the last one leaving forgets them. */
    void leaveSlots(String semaphore, int permits) {
        semaphoreSlots.computeIfPresent(
                new SlotsKey(semaphore, permits), (key, slots) -> --slots.users == 0 ? null : slots);
    }

    /** @return how many semaphores this client keeps notes of now (for tests: none once every handle is closed) */
    int semaphoresInUse() {
        return semaphoreSlots.size();
    }

    @Override
    public MultiLock multiLock(String... names) {
        Arguments.notNull("names", names);
        return multiLock(Arrays.asList(names));
    }

    @Override
    public MultiLock multiLock(Collection<String> names) {
        Arguments.notNull("names", names);
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a multi-lock needs at least one lock name");
        }
        TreeSet<String> sorted = new TreeSet<>();
        for (String name : names) {
            sorted.add(Checks.lockName(name));
        }
        List<LockView> members = new ArrayList<>();
        for (String name : sorted) {
            members.add(new LockView(this, key(name), LockMode.EXCLUSIVE));
        }
        return new MultiLockView(this, members);
    }

    @Override
    public Leadership leadership(String name) {
        return leadership(
                name, HolderIdentity.describeProcess() + "#" + Tokens.next().substring(0, 6));
    }

    @Override
    public Leadership leadership(String name, String participantId) {
        return new Election(
                this, new LockView(this, key(name), LockMode.EXCLUSIVE), Checks.participantId(participantId));
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        LockKey key = key(name);
        switcher.current().require(Capability.READ_WRITE);
        return new ReadWriteView(new LockView(this, key, LockMode.READ), new LockView(this, key, LockMode.WRITE));
    }

    private LockKey key(String name) {
        ensureOpen();
        return new LockKey(settings.namespace(), Checks.lockName(name));
    }

    /** @return the epochs this client has seen and owes ({@link Lease#fence()}) */
    Epochs epochs() {
        return epochs;
    }

    @Override
    public String namespace() {
        return settings.namespace();
    }

    @Override
    public String currentEngine() {
        return switcher.current().name();
    }

    @Override
    public String currentEngineUri() {
        return switcher.current().uri();
    }

    @Override
    public List<String> engines() {
        return switcher.names();
    }

    @Override
    public String switchEngine() {
        ensureOpen();
        return switcher.switchToNext(EngineSwitchEvent.Reason.MANUAL, null).name();
    }

    @Override
    public String switchEngine(String engine) {
        ensureOpen();
        return switcher.switchTo(switcher.named(engine), EngineSwitchEvent.Reason.MANUAL, null)
                .name();
    }

    @Override
    public void onEngineSwitch(EngineSwitchListener listener) {
        switcher.addListener(listener);
    }

    @Override
    public IdempotencyGuard idempotency(IdempotencyOptions options) {
        Arguments.notNull("options", options);
        ensureOpen();
        // Records stay on the primary whatever the current engine: a switch must not hide a completed
        // or running attempt from a retry, and every instance with the same engines finds the same records.
        EngineHandle engine = switcher.primary();
        IdempotencyStore store = engine.engine()
                .ability(KeepsIdempotencyRecords.class)
                .map(KeepsIdempotencyRecords::idempotencyStore)
                .orElseThrow(() -> new UnsupportedCapabilityException("engine '" + engine.name() + "' (" + engine.uri()
                        + ") keeps no idempotency records, and a client keeps them on its"
                        + " first engine; engines that do: mem:, file:, redis:// (one server, Sentinel, Cluster), zk://, etcd://, jdbc:, memcached://"
                        + (engines.size() > 1
                                ? ". Put one of those first, or use a client of its own for the guard"
                                : "")));
        synchronized (this) {
            if (idempotencyRenewer == null) {
                idempotencyRenewer = IdempotencyGuard.newRenewer();
            }
            return new IdempotencyGuard(store, settings.namespace(), engine.uri(), options, idempotencyRenewer);
        }
    }

    @Override
    public Set<Capability> capabilities() {
        return switcher.current().capabilities();
    }

    @Override
    public String engineUri(String engine) {
        return switcher.named(engine).uri();
    }

    @Override
    public List<String> checkEngine(String engine) {
        ensureOpen();
        return List.copyOf(switcher.named(engine)
                .engine()
                .checkHealth(new LockKey(settings.namespace(), HealthMonitor.PROBE_NAME)));
    }

    @Override
    public List<LockContention> contention() {
        return contention.snapshot();
    }

    @Override
    public List<LockInfo> inspect(String prefix) {
        return inspectEngine(switcher.current().name(), prefix);
    }

    @Override
    public List<LockInfo> inspectEngine(String engineName, String prefix) {
        Arguments.notNull("prefix", prefix);
        ensureOpen();
        EngineHandle engine = switcher.named(engineName);
        engine.require(Capability.INSPECT);
        Inspects lister = engine.engine()
                .ability(Inspects.class)
                .orElseThrow(() -> new UnsupportedCapabilityException(
                        "engine '" + engine.name() + "' (" + engine.uri() + ") cannot list its locks"));
        List<LockInfo> infos = new ArrayList<>(lister.inspect(settings.namespace(), prefix));
        infos.sort(Comparator.comparing(LockInfo::name).thenComparing(LockInfo::fencingToken));
        return infos;
    }

    Duration defaultLease() {
        return settings.defaultLease();
    }

    LeaseEvents events() {
        return events;
    }

    SafeMetrics metrics() {
        return metrics;
    }

    // ---- thread-bound holds ----------------------------------------------------------------

    boolean lockForThread(LockView view, Duration lease, boolean renewed, long waitNanos, boolean interruptible)
            throws InterruptedException {
        Thread thread = Thread.currentThread();
        boolean shared = view.mode().isShared();
        ThreadHoldKey holdKey = new ThreadHoldKey(view.key(), shared, thread);
        Holding held = threadHolds.get(holdKey);
        if (held != null) {
            held.ensureNotLost();
            held.holdCount++;
            return true;
        }
        if (shared) {
            Holding write = threadHolds.get(new ThreadHoldKey(view.key(), false, thread));
            if (write != null) {
                write.ensureNotLost();
                write.nestedReads++;
                return true;
            }
        } else if (threadHolds.containsKey(new ThreadHoldKey(view.key(), true, thread))) {
            throw new IllegalStateException("thread '" + thread.getName() + "' holds the read lock '" + view.name()
                    + "' and asks for its write lock: that upgrade would deadlock; release the read lock first");
        }
        Holding holding =
                acquirer.acquire(AcquireRequest.startingNow(view, lease, renewed, waitNanos, interruptible, true));
        if (holding == null) {
            return false;
        }
        threadHolds.put(holdKey, holding);
        return true;
    }

    void unlockForThread(LockView view) {
        Thread thread = Thread.currentThread();
        boolean shared = view.mode().isShared();
        ThreadHoldKey holdKey = new ThreadHoldKey(view.key(), shared, thread);
        Holding holding = threadHolds.get(holdKey);
        if (holding == null && shared) {
            ThreadHoldKey writeKey = new ThreadHoldKey(view.key(), false, thread);
            Holding write = threadHolds.get(writeKey);
            if (write != null && write.nestedReads > 0) {
                write.nestedReads--;
                finishThreadUnlock(writeKey, write);
                return;
            }
        }
        if (holding == null) {
            throw new IllegalMonitorStateException("thread '" + thread.getName() + "' does not hold "
                    + view.mode().label() + " " + view.described());
        }
        holding.holdCount--;
        finishThreadUnlock(holdKey, holding);
    }

    private void finishThreadUnlock(ThreadHoldKey holdKey, Holding holding) {
        if (holding.holdCount > 0 || holding.nestedReads > 0) {
            holding.ensureNotLost();
            return;
        }
        threadHolds.remove(holdKey);
        holding.release();
    }

    Holding threadHold(LockView view) {
        Thread thread = Thread.currentThread();
        Holding holding =
                threadHolds.get(new ThreadHoldKey(view.key(), view.mode().isShared(), thread));
        if (holding == null && view.mode().isShared()) {
            Holding write = threadHolds.get(new ThreadHoldKey(view.key(), false, thread));
            if (write != null && write.nestedReads > 0) {
                return write;
            }
        }
        return holding;
    }

    boolean isLocked(LockView view) {
        ensureOpen();
        return switcher.current().engine().isLocked(view.key());
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("this Cerberus client is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        holds.close();
        async.close();
        threadHolds.clear();
        synchronized (this) {
            if (idempotencyRenewer != null) {
                idempotencyRenewer.shutdownNow();
            }
        }
        if (health != null) {
            health.close();
        }
        renewer.close();
        events.close();
        for (EngineHandle engine : engines) {
            closeQuietly(engine);
        }
    }

    private static void closeQuietly(EngineHandle engine) {
        try {
            engine.engine().close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not close engine '" + engine.name() + "' (" + engine.uri() + ")", e);
        }
    }

    @Override
    public String toString() {
        EngineHandle engine = switcher.current();
        return "Cerberus[namespace=" + settings.namespace() + ", engine=" + engine.name() + " " + engine.uri() + "]";
    }
}
