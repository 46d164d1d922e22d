package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.CerberusMetrics;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineSwitchListener;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Backoff;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.Redaction;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link Cerberus} client: engines, the renewer, and the holds of this client.
 *
 * <p>Acquisition loop: one {@code tryAcquire}; on busy, wait in the engine for a change, at most
 * the engine's retry bound or the caller's remaining wait, then try again. The same attempt (same
 * token) is used throughout, so a queued engine keeps the attempt's place, and the attempt is
 * abandoned in the engine on timeout, interruption or failure.
 */
public final class CerberusClient implements Cerberus {
    private static final System.Logger LOG = System.getLogger(CerberusClient.class.getName());
    private static final AtomicInteger CLIENTS = new AtomicInteger();
    private static final long MIN_PAUSE_NANOS = 1_000_000L;
    /** The first pause before trying an unreachable engine again; it doubles up to the max, jittered. */
    private static final Duration FIRST_OUTAGE_PAUSE = Duration.ofMillis(50);
    private static final Duration MAX_OUTAGE_PAUSE = Duration.ofSeconds(1);
    /** How often a waiter of a client with several engines and no failover looks for a switch by hand. */
    private static final long SWITCH_WATCH_NANOS = 250_000_000L;

    private final ClientSettings settings;
    private final List<EngineHandle> engines;
    private final EngineSwitcher switcher;
    private final HealthMonitor health;
    private final SafeMetrics metrics;
    /** Renews the leases of every guard's running attempts: one thread per client, made at the first guard. */
    private java.util.concurrent.ScheduledExecutorService idempotencyRenewer;
    private final LeaseRenewer renewer;
    private final LeaseEvents events;
    /** Every hold not yet released, by token. */
    private final Map<String, Holding> live = new ConcurrentHashMap<>();
    /** This client's exclusive waiters per engine and lock, for engines that line them up here. */
    private final LocalLines lines = new LocalLines(live::containsKey);
    /** Thread-bound holds. */
    private final Map<ThreadHoldKey, Holding> threadHolds = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private record ThreadHoldKey(LockKey key, boolean shared, Thread thread) {
    }

    /**
     * @param settings checked settings
     * @param engineSpecs the engines, the primary first
     */
    public CerberusClient(ClientSettings settings, List<EngineSpec> engineSpecs) {
        this.settings = settings;
        String clientName = String.valueOf(CLIENTS.incrementAndGet());
        List<EngineHandle> opened = new ArrayList<>();
        LossReporter reporter = new LossReporter() {
            @Override
            public void lost(String token, String reason) {
                Holding holding = live.get(token);
                if (holding != null) {
                    holding.markLost(reason, null);
                }
            }

            @Override
            public void uncertain(String token, String reason) {
                Holding holding = live.get(token);
                if (holding != null) {
                    holding.markUncertain();
                    // the engine has said once why all its holds are uncertain; one line per hold would repeat it
                    LOG.log(Level.DEBUG, "lock '" + holding.lockName() + "' is uncertain: " + reason);
                }
            }

            @Override
            public void confirmed(String token) {
                Holding holding = live.get(token);
                if (holding != null) {
                    holding.confirmed();
                }
            }
        };
        try {
            for (EngineSpec spec : engineSpecs) {
                EngineContext context = new EngineContext(spec.uri(), settings.connectTimeout(), reporter,
                        spec.options(), settings.defaultLease());
                if (opened.isEmpty()) {
                    opened.add(EngineHandle.of(spec.name(), EngineRegistry.open(context)));
                    continue;
                }
                // a standby that is down now must not keep the client from starting on its primary
                try {
                    opened.add(EngineHandle.of(spec.name(), EngineRegistry.open(context)));
                } catch (EngineUnavailableException e) {
                    LOG.log(Level.WARNING, "standby engine '" + spec.name() + "' (" + Redaction.redact(spec.uri())
                            + ") cannot be reached; starting without it, and trying it again when it is used or checked: "
                            + e.getMessage());
                    opened.add(EngineHandle.of(spec.name(), new DeferredEngine(context,
                            EngineRegistry.declaredCapabilities(spec.uri()), e)));
                }
            }
        } catch (RuntimeException e) {
            opened.forEach(handle -> closeQuietly(handle));
            throw e;
        }
        this.engines = List.copyOf(opened);
        this.switcher = new EngineSwitcher(engines, settings.defaultLease(), settings.lockDelay());
        this.metrics = SafeMetrics.of(settings.metrics());
        switcher.addListener(metrics::engineSwitch);
        this.renewer = new LeaseRenewer(clientName);
        this.events = new LeaseEvents(clientName);
        this.health = settings.failover() == null || engines.size() < 2 ? null
                : new HealthMonitor(switcher, settings.failover(), settings.namespace(), clientName);
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
    public DistributedReadWriteLock readWriteLock(String name) {
        LockKey key = key(name);
        switcher.current().require(Capability.READ_WRITE);
        return new ReadWriteView(new LockView(this, key, LockMode.READ), new LockView(this, key, LockMode.WRITE));
    }

    private LockKey key(String name) {
        ensureOpen();
        return new LockKey(settings.namespace(), Checks.lockName(name));
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
        return switcher.switchTo(switcher.named(engine), EngineSwitchEvent.Reason.MANUAL, null).name();
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
        IdempotencyStore store = engine.engine().idempotencyStore().orElseThrow(() -> new UnsupportedCapabilityException(
                "engine '" + engine.name() + "' (" + engine.uri() + ") keeps no idempotency records, and a client keeps them on its"
                        + " first engine; engines that do: mem:, file:, redis:// (one server, Sentinel, Cluster), zk://, etcd://, jdbc:"
                        + (engines.size() > 1 ? ". Put one of those first, or use a client of its own for the guard" : "")));
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
    public void checkEngine(String engine) {
        ensureOpen();
        switcher.named(engine).engine().isLocked(new LockKey(settings.namespace(), HealthMonitor.PROBE_NAME));
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
        List<LockInfo> infos = new ArrayList<>(engine.engine().inspect(settings.namespace(), prefix));
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
        Holding holding = acquire(view, lease, renewed, waitNanos, interruptible, true);
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
                    + view.mode().label() + " lock '" + view.name() + "'");
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
        Holding holding = threadHolds.get(new ThreadHoldKey(view.key(), view.mode().isShared(), thread));
        if (holding == null && view.mode().isShared()) {
            Holding write = threadHolds.get(new ThreadHoldKey(view.key(), false, thread));
            if (write != null && write.nestedReads > 0) {
                return write;
            }
        }
        return holding;
    }

    // ---- acquisition -----------------------------------------------------------------------

    /**
     * Acquires a new hold.
     *
     * @param waitNanos how long to wait; negative waits for ever
     * @return the hold, or null if the wait ran out
     */
    Holding acquire(LockView view, Duration lease, boolean renewed, long waitNanos, boolean interruptible, boolean threadBound)
            throws InterruptedException {
        long start = System.nanoTime();
        EngineHandle engine = switcher.current();
        CerberusMetrics.AcquireOutcome outcome = CerberusMetrics.AcquireOutcome.FAILED;
        try {
            Backoff outagePauses = new Backoff(FIRST_OUTAGE_PAUSE, MAX_OUTAGE_PAUSE);
            while (true) {
                try {
                    Holding holding = acquireGuarded(view, lease, renewed, waitNanos, interruptible, threadBound, start, engine);
                    outcome = holding == null ? CerberusMetrics.AcquireOutcome.TIMED_OUT : CerberusMetrics.AcquireOutcome.GRANTED;
                    return holding;
                } catch (Rerouted e) {
                    engine = switcher.current(); // the wait goes on where new acquisitions go now
                } catch (EngineUnavailableException e) {
                    long left = outageBudgetNanos(waitNanos) - (System.nanoTime() - start);
                    if (left <= 0) {
                        throw e;
                    }
                    // an engine that cannot be reached is tried again within the wait, on whichever engine is current
                    long pause = Math.min(left, outagePauses.next().toNanos());
                    LOG.log(Level.DEBUG, "lock '" + view.name() + "': engine '" + engine.name() + "' cannot be reached ("
                            + e.getMessage() + "); trying again within the wait");
                    parkFor(pause, interruptible, view);
                    ensureOpen();
                    engine = switcher.current();
                }
            }
        } catch (InterruptedException e) {
            outcome = CerberusMetrics.AcquireOutcome.INTERRUPTED;
            throw e;
        } finally {
            metrics.acquisition(engine, view.mode().label(), outcome, start);
        }
    }

    private Holding acquireGuarded(LockView view, Duration lease, boolean renewed, long waitNanos, boolean interruptible,
            boolean threadBound, long start, EngineHandle engine) throws InterruptedException {
        ensureOpen();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring lock '" + view.name() + "'");
        }
        List<EngineSwitcher.Guard> guards = switcher.guards();
        Capability needed = needed(view.mode());
        if (needed != null) {
            engine.require(needed);
        }
        Holding holding = acquireOn(engine, view, lease, renewed, start, waitNanos, interruptible, threadBound, true);
        if (holding == null || guards.isEmpty()) {
            return holding;
        }
        boolean done = false;
        try {
            for (EngineSwitcher.Guard guard : guards) {
                if (guard.engine() == engine || needed != null && !guard.engine().has(needed)) {
                    continue;
                }
                if (!guardedOn(guard, holding, view, lease, renewed, start, waitNanos, interruptible)) {
                    return null;
                }
            }
            done = true;
            return holding;
        } finally {
            if (!done) {
                releaseQuietly(holding);
            }
        }
    }

    /**
     * Takes the lock on an old engine in its lock-delay too, or, when that engine cannot be
     * reached, waits for the lock-delay to end: by then every lease it granted has run out.
     *
     * @return false if the caller's wait ran out first
     */
    private boolean guardedOn(EngineSwitcher.Guard guard, Holding holding, LockView view, Duration lease, boolean renewed, long start,
            long waitNanos, boolean interruptible) throws InterruptedException {
        EngineHandle old = guard.engine();
        String why;
        if (health != null && !health.passing(old)) {
            why = "fails its health checks";
        } else {
            try {
                Holding extra = acquireOn(old, view, lease, renewed, start, waitNanos, interruptible, false, false);
                if (extra == null) {
                    return false;
                }
                holding.addGuard(extra);
                return true;
            } catch (EngineUnavailableException e) {
                why = "cannot be reached (" + e.getMessage() + ")";
            }
        }
        long left = guard.untilNanos() - System.nanoTime();
        if (left <= 0) {
            return true;
        }
        if (waitNanos >= 0 && start + waitNanos - guard.untilNanos() < 0) {
            LOG.log(Level.INFO, "lock '" + view.name() + "' not taken: engine '" + old.name() + "' " + why
                    + " and its lock-delay lasts longer than the wait");
            return false;
        }
        LOG.log(Level.INFO, "lock '" + view.name() + "' waits " + Durations.format(Duration.ofNanos(left)) + " for the lock-delay of engine '"
                + old.name() + "', which " + why + ": a hold it granted may still be live until then");
        parkUntil(guard.untilNanos(), interruptible, view, "waited for a lock-delay");
        return true;
    }

    private static void parkUntil(long deadlineNanos, boolean interruptible, LockView view, String doing) throws InterruptedException {
        boolean interrupted = false;
        for (long left = deadlineNanos - System.nanoTime(); left > 0; left = deadlineNanos - System.nanoTime()) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                if (interruptible) {
                    throw new InterruptedException("interrupted while lock '" + view.name() + "' " + doing);
                }
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the capability an acquisition in this mode needs, null for none */
    private static Capability needed(LockMode mode) {
        return switch (mode) {
            case EXCLUSIVE -> null;
            case FAIR -> Capability.FAIR;
            default -> Capability.READ_WRITE;
        };
    }

    private void releaseQuietly(Holding holding) {
        try {
            holding.release();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not give back lock '" + holding.lockName() + "' on engine '" + holding.engine.name()
                    + "' after failing to take it on an engine in its lock-delay: " + e.getMessage());
        }
    }

    /**
     * One acquisition on one engine, waiting at most until {@code waitNanos} after {@code start}.
     * An exclusive attempt that may wait on an engine that asks for it waits in its lock's local
     * line ({@link LocalLines}) and asks the engine only in its turn.
     */
    private Holding acquireOn(EngineHandle engine, LockView view, Duration lease, boolean renewed, long start, long waitNanos,
            boolean interruptible, boolean threadBound, boolean followSwitch) throws InterruptedException {
        while (true) {
            Holding holding = acquireOnce(engine, view, lease, renewed, start, waitNanos, interruptible, threadBound, followSwitch);
            if (holding == null || !holding.isReleased()) {
                return holding;
            }
            // granted too late and given back: try again within the wait
            if (waitNanos >= 0 && System.nanoTime() - start - waitNanos >= 0) {
                return null;
            }
        }
    }

    /**
     * As {@link #acquireOn}, once: a grant that arrived after its lease had run out comes back
     * released; with {@code followSwitch}, a wait that sees the client switch away from
     * {@code engine} is withdrawn there and throws {@link Rerouted}.
     */
    private Holding acquireOnce(EngineHandle engine, LockView view, Duration lease, boolean renewed, long start, long waitNanos,
            boolean interruptible, boolean threadBound, boolean followSwitch) throws InterruptedException {
        Acquisition attempt = new Acquisition(view.key(), view.mode(), Tokens.next(),
                HolderIdentity.describeCurrentThread(), lease);
        boolean lined = view.mode() == LockMode.EXCLUSIVE && engine.engine().linesUpWaitersLocally();
        LocalLines.Ticket ticket = lined && waitNanos != 0 ? lines.enter(engine, attempt) : null;
        boolean interrupted = false;
        boolean done = false;
        try {
            while (true) {
                if (followSwitch && switcher.current() != engine) {
                    throw Rerouted.INSTANCE;
                }
                LocalLines.Handed handed = ticket != null ? ticket.takeHanded() : null;
                if (handed != null) {
                    // the holder's release granted it to this attempt, which sent nothing
                    done = true;
                    return hold(engine, attempt, handed.fencingToken(), handed.sentNanos(), renewed, threadBound, ticket);
                }
                if (ticket != null && !ticket.mayAsk()) {
                    long pause = within(watchingSwitches(LocalLines.RECHECK_NANOS), start, waitNanos);
                    if (pause < 0) {
                        return null;
                    }
                    interrupted |= pause(() -> ticket.await(pause), interruptible);
                    ensureOpen();
                    continue;
                }
                long sentAt = System.nanoTime();
                AcquireResult result = engine.engine().tryAcquire(attempt);
                if (result instanceof AcquireResult.Granted granted) {
                    if (granted.ageNanos() > 0) {
                        // granted by an earlier request (a hand-off): the lease runs from that one
                        sentAt = Math.min(sentAt, System.nanoTime() - granted.ageNanos());
                    }
                    Holding holding = hold(engine, attempt, granted.fencingToken(), sentAt, renewed, threadBound, ticket);
                    if (ticket == null && lined) {
                        lines.grantedOutOfLine(engine, view.key(), attempt.token());
                    }
                    done = true;
                    return holding;
                }
                long pause = within(watchingSwitches(((AcquireResult.Busy) result).retryWithin().toNanos()), start, waitNanos);
                if (pause < 0) {
                    return null;
                }
                interrupted |= pause(() -> engine.engine().awaitChange(attempt, Duration.ofNanos(Math.max(pause, MIN_PAUSE_NANOS))),
                        interruptible);
                ensureOpen();
            }
        } finally {
            if (!done) {
                if (ticket != null) {
                    ticket.leave();
                }
                if (ticket == null || ticket.asked()) {
                    abandonQuietly(engine, attempt);
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Makes the hold of a granted attempt: counted live, its line (if any) left, its renewal
     * scheduled.
     *
     * @param sentAt when the request that granted it was sent: the lease counts from then
     */
    private Holding hold(EngineHandle engine, Acquisition attempt, long fencingToken, long sentAt, boolean renewed,
            boolean threadBound, LocalLines.Ticket ticket) {
        Holding holding = new Holding(this, engine, attempt, fencingToken, renewed, threadBound, sentAt);
        live.put(attempt.token(), holding);
        if (ticket != null) {
            ticket.granted(attempt.token());
        }
        if (holding.localLeaseOver()) {
            giveBackLate(holding, sentAt);
            return holding;
        }
        switcher.granted(engine, attempt.lease());
        renewer.start(holding);
        return holding;
    }

    /**
     * Gives back a grant whose answer arrived after its lease had run out, judged from when its
     * request was sent (the caller was paused, or the answer was slow): the engine may already have
     * granted the lock to another, so the caller is never told it holds it.
     */
    private void giveBackLate(Holding holding, long sentAt) {
        LOG.log(Level.INFO, "lock '" + holding.lockName() + "' was granted by engine '" + holding.engine.name() + "' "
                + Durations.format(Duration.ofNanos(System.nanoTime() - sentAt)) + " after its request was sent, past its lease of "
                + Durations.format(holding.leaseTime()) + ": given back, not handed to the caller");
        try {
            holding.giveBack();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "the late grant of lock '" + holding.lockName() + "' was not given back (its lease has run out anyway): "
                    + e.getMessage());
        }
    }

    /**
     * @return {@code pause}, cut to the failover check interval on a client with failover (to a
     *     quarter of a second on other clients of several engines): a waiter then sees a switch
     *     soon and goes on waiting on the new engine
     */
    private long watchingSwitches(long pause) {
        if (health != null) {
            return Math.min(pause, settings.failover().checkEvery().toNanos());
        }
        return engines.size() > 1 ? Math.min(pause, SWITCH_WATCH_NANOS) : pause;
    }

    /**
     * How long an acquisition keeps trying an engine that cannot be reached: its own wait, or for
     * a wait without end, the connect timeout (plus the time failover takes to switch, on a client
     * with failover); {@code tryLock()} (no wait) fails at once.
     */
    private long outageBudgetNanos(long waitNanos) {
        if (waitNanos >= 0) {
            return waitNanos;
        }
        long budget = settings.connectTimeout().toNanos();
        if (health != null) {
            budget += settings.failover().unhealthyFor().toNanos() + settings.failover().checkEvery().toNanos();
        }
        return budget;
    }

    private static void parkFor(long nanos, boolean interruptible, LockView view) throws InterruptedException {
        parkUntil(System.nanoTime() + nanos, interruptible, view, "waited to try an unreachable engine again");
    }

    /** Thrown inside an acquisition whose wait saw the client switch engines: it goes on on the new one. */
    private static final class Rerouted extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final Rerouted INSTANCE = new Rerouted();

        private Rerouted() {
            super("the client switched engines", null, false, false);
        }
    }

    /** @return {@code pause} cut to what is left of a wait of {@code waitNanos} from {@code start}; -1 if nothing is left */
    private static long within(long pause, long start, long waitNanos) {
        if (waitNanos < 0) {
            return pause;
        }
        long left = waitNanos - (System.nanoTime() - start);
        return left <= 0 ? -1 : Math.min(pause, left);
    }

    /** A wait of the acquire loop. */
    @FunctionalInterface
    private interface Pause {
        void run() throws InterruptedException;
    }

    /**
     * Runs a wait of the acquire loop.
     *
     * @return true if it was interrupted and the acquisition is not interruptible (the caller sets
     *     the interrupt again when it is done)
     * @throws InterruptedException if interrupted and the acquisition is interruptible
     */
    private static boolean pause(Pause pause, boolean interruptible) throws InterruptedException {
        try {
            pause.run();
            return false;
        } catch (InterruptedException e) {
            if (interruptible) {
                throw e;
            }
            return true;
        }
    }

    private void abandonQuietly(EngineHandle engine, Acquisition attempt) {
        try {
            engine.engine().abandon(attempt);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not withdraw " + attempt + " from engine '" + engine.name()
                    + "'; if it was granted the engine frees it when its lease ends", e);
        }
    }

    boolean isLocked(LockView view) {
        ensureOpen();
        return switcher.current().engine().isLocked(view.key());
    }

    // ---- loss and release bookkeeping ------------------------------------------------------

    /**
     * A hold was lost; it stays in the thread map until unlocked, so unlock() can say so. Logged at
     * INFO: the holder is told by {@link io.cerberus.LockLostException} and its loss listeners, and
     * the loss is counted in the metrics; a WARNING too would report one event twice.
     */
    void lost(Holding holding, io.cerberus.LockLostException reason) {
        live.remove(holding.acquisition.token());
        lines.ended(holding.engine, holding.acquisition.key(), holding.acquisition.token());
        LOG.log(Level.INFO, reason.getMessage());
    }

    /**
     * Releases a hold in its engine. When the engine hands locks over and the hold's line has a
     * head asleep on its turn, the release grants the lock to that head in the same request
     * ({@link LocalLines#handOverFrom}).
     *
     * @param holding the hold
     * @return whether the engine still had the hold
     */
    boolean releaseInEngine(Holding holding) {
        LockEngine engine = holding.engine.engine();
        Acquisition holder = holding.acquisition;
        LocalLines.HandOver handOver = holder.mode() == LockMode.EXCLUSIVE && engine.linesUpWaitersLocally() && engine.handsOver()
                ? lines.handOverFrom(holding.engine, holder.key(), holder.token()) : null;
        if (handOver == null) {
            return engine.release(holder);
        }
        long sentAt = System.nanoTime();
        HandOff done = null;
        try {
            done = engine.handOver(holder, handOver.next());
        } finally {
            boolean handed = done != null && done.handed();
            if (!lines.handOverEnded(handOver, handed, handed ? done.fencingToken() : -1, sentAt)) {
                // the waiter gave up while the lock was handed to it
                abandonQuietly(holding.engine, handOver.next());
            }
        }
        return done.released();
    }

    void forget(Holding holding) {
        live.remove(holding.acquisition.token());
        lines.ended(holding.engine, holding.acquisition.key(), holding.acquisition.token());
    }

    private void ensureOpen() {
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
        lines.close();
        for (Holding holding : List.copyOf(live.values())) {
            try {
                holding.release();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "while closing, lock '" + holding.lockName() + "': " + e.getMessage());
            }
        }
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
