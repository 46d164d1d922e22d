package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.CerberusMetrics;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Backoff;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Takes new holds for one client: the acquire loop.
 *
 * <p>One {@code tryAcquire}; on busy, wait in the engine for a change, at most the engine's retry
 * bound or the caller's remaining wait, then try again. The same attempt (same token) is used
 * throughout, so a queued engine keeps the attempt's place, and the attempt is abandoned in the
 * engine on timeout, interruption or failure. An exclusive attempt on an engine that lines waiters
 * up locally asks only in its turn ({@link LocalLines}). Around that: an unreachable engine is
 * tried again within the wait (outage pauses), a wait that sees a switch goes on on the new engine
 * ({@code SwitchedWhileWaiting}), an engine in its lock-delay must grant too, and a grant answered after its
 * lease ran out is given back, never handed to the caller.
 *
 * <p>Invariants: every way out of an attempt either returns a hold registered in
 * {@link LiveHolds} (its renewal started) or leaves the attempt's line and abandons it in the
 * engine; an interrupt swallowed by a non-interruptible wait is set again on the way out.
 */
final class Acquirer {
    private static final System.Logger LOG = System.getLogger(Acquirer.class.getName());
    private static final long MIN_PAUSE_NANOS = 1_000_000L;
    /** The first pause before trying an unreachable engine again; it doubles up to the max, jittered. */
    private static final Duration FIRST_OUTAGE_PAUSE = Duration.ofMillis(50);

    private static final Duration MAX_OUTAGE_PAUSE = Duration.ofSeconds(1);
    /** How often a waiter of a client with several engines and no failover looks for a switch by hand. */
    private static final long SWITCH_WATCH_NANOS = 250_000_000L;

    private final CerberusClient client;
    private final ClientSettings settings;
    private final int engineCount;
    private final EngineSwitcher switcher;
    /** The failover monitor, or null on a client without failover. */
    private final HealthMonitor health;

    private final SafeMetrics metrics;
    private final LeaseRenewer renewer;
    private final LiveHolds holds;

    Acquirer(
            CerberusClient client,
            ClientSettings settings,
            int engineCount,
            EngineSwitcher switcher,
            HealthMonitor health,
            SafeMetrics metrics,
            LeaseRenewer renewer,
            LiveHolds holds) {
        this.client = client;
        this.settings = settings;
        this.engineCount = engineCount;
        this.switcher = switcher;
        this.health = health;
        this.metrics = metrics;
        this.renewer = renewer;
        this.holds = holds;
    }

    /**
     * Acquires a new hold.
     *
     * @return the hold, or null if the wait ran out
     */
    Holding acquire(AcquireRequest request) throws InterruptedException {
        LockView view = request.view();
        long start = request.start();
        long waitNanos = request.waitNanos();
        boolean interruptible = request.interruptible();
        EngineHandle engine = switcher.current();
        CerberusMetrics.AcquireOutcome outcome = CerberusMetrics.AcquireOutcome.FAILED;
        try {
            Backoff outagePauses = new Backoff(FIRST_OUTAGE_PAUSE, MAX_OUTAGE_PAUSE);
            while (true) {
                try {
                    Holding holding = acquireWithLockDelay(request, engine);
                    outcome = holding == null
                            ? CerberusMetrics.AcquireOutcome.TIMED_OUT
                            : CerberusMetrics.AcquireOutcome.GRANTED;
                    return holding;
                } catch (SwitchedWhileWaiting e) {
                    engine = switcher.current(); // the wait goes on where new acquisitions go now
                } catch (EngineUnavailableException e) {
                    long left = outageBudgetNanos(waitNanos) - (System.nanoTime() - start);
                    if (left <= 0) {
                        throw e;
                    }
                    // an engine that cannot be reached is tried again within the wait, on whichever engine is current
                    long pause = Math.min(left, outagePauses.next().toNanos());
                    LOG.log(
                            Level.DEBUG,
                            "lock '" + view.name() + "': engine '" + engine.name() + "' cannot be reached ("
                                    + e.getMessage() + "); trying again within the wait");
                    parkFor(pause, interruptible, view);
                    client.ensureOpen();
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

    private Holding acquireWithLockDelay(AcquireRequest request, EngineHandle engine) throws InterruptedException {
        LockView view = request.view();
        client.ensureOpen();
        if (request.interruptible() && Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring lock '" + view.name() + "'");
        }
        List<EngineSwitcher.OldEngineInLockDelay> inLockDelay = switcher.inLockDelay();
        Capability needed = needed(view.mode());
        if (needed != null) {
            engine.require(needed);
        }
        Holding holding = acquireOn(engine, request, true);
        if (holding == null || inLockDelay.isEmpty()) {
            return holding;
        }
        boolean done = false;
        try {
            for (EngineSwitcher.OldEngineInLockDelay inDelay : inLockDelay) {
                if (inDelay.engine() == engine
                        || needed != null && !inDelay.engine().has(needed)) {
                    continue;
                }
                if (!alsoHeldOn(inDelay, holding, request)) {
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
    private boolean alsoHeldOn(EngineSwitcher.OldEngineInLockDelay inDelay, Holding holding, AcquireRequest request)
            throws InterruptedException {
        LockView view = request.view();
        EngineHandle old = inDelay.engine();
        String why;
        if (health != null && !health.passing(old)) {
            why = "fails its health checks";
        } else {
            try {
                Holding extra = acquireOn(old, request.lockDelayHold(), false);
                if (extra == null) {
                    return false;
                }
                holding.addLockDelayHold(extra);
                return true;
            } catch (EngineUnavailableException e) {
                why = "cannot be reached (" + e.getMessage() + ")";
            }
        }
        long left = inDelay.untilNanos() - System.nanoTime();
        if (left <= 0) {
            return true;
        }
        if (request.waitNanos() >= 0 && request.start() + request.waitNanos() - inDelay.untilNanos() < 0) {
            LOG.log(
                    Level.INFO,
                    "lock '" + view.name() + "' not taken: engine '" + old.name() + "' " + why
                            + " and its lock-delay lasts longer than the wait");
            return false;
        }
        LOG.log(
                Level.INFO,
                "lock '" + view.name() + "' waits " + Durations.format(Duration.ofNanos(left))
                        + " for the lock-delay of engine '" + old.name() + "', which " + why
                        + ": a hold it granted may still be live until then");
        parkUntil(inDelay.untilNanos(), request.interruptible(), view, "waited for a lock-delay");
        return true;
    }

    private static void parkUntil(long deadlineNanos, boolean interruptible, LockView view, String doing)
            throws InterruptedException {
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
            LOG.log(
                    Level.WARNING,
                    "could not give back lock '" + holding.lockName() + "' on engine '" + holding.engine.name()
                            + "' after failing to take it on an engine in its lock-delay: " + e.getMessage());
        }
    }

    /**
     * One acquisition on one engine, waiting at most until {@code waitNanos} after {@code start}.
     * An exclusive attempt that may wait on an engine that asks for it waits in its lock's local
     * line ({@link LocalLines}) and asks the engine only in its turn.
     */
    private Holding acquireOn(EngineHandle engine, AcquireRequest request, boolean followSwitch)
            throws InterruptedException {
        while (true) {
            Holding holding = acquireOnce(engine, request, followSwitch);
            if (holding == null || !holding.isReleased()) {
                return holding;
            }
            // granted too late and given back: try again within the wait
            if (request.waitNanos() >= 0 && System.nanoTime() - request.start() - request.waitNanos() >= 0) {
                return null;
            }
        }
    }

    /**
     * As {@link #acquireOn}, once: a grant that arrived after its lease had run out comes back
     * released; with {@code followSwitch}, a wait that sees the client switch away from
     * {@code engine} is withdrawn there and throws {@link SwitchedWhileWaiting}.
     */
    private Holding acquireOnce(EngineHandle engine, AcquireRequest request, boolean followSwitch)
            throws InterruptedException {
        LockView view = request.view();
        long start = request.start();
        long waitNanos = request.waitNanos();
        boolean interruptible = request.interruptible();
        boolean renewed = request.renewed();
        boolean threadBound = request.threadBound();
        Duration lease = request.lease();
        Acquisition attempt =
                new Acquisition(view.key(), view.mode(), Tokens.next(), HolderIdentity.describeCurrentThread(), lease);
        LinesUpLocally lining = view.mode() == LockMode.EXCLUSIVE
                ? engine.engine().ability(LinesUpLocally.class).orElse(null)
                : null;
        boolean lined = lining != null;
        LocalLines.Ticket ticket = lined && waitNanos != 0 ? holds.lines().enter(engine, attempt, lining) : null;
        boolean interrupted = false;
        boolean done = false;
        try {
            while (true) {
                if (followSwitch && switcher.current() != engine) {
                    throw SwitchedWhileWaiting.INSTANCE;
                }
                LocalLines.Handed handed = ticket != null ? ticket.takeHanded() : null;
                if (handed != null) {
                    // the holder's release granted it to this attempt, which sent nothing
                    done = true;
                    return hold(
                            engine, attempt, handed.fencingToken(), handed.sentNanos(), renewed, threadBound, ticket);
                }
                if (ticket != null && !ticket.mayAsk()) {
                    long pause = within(watchingSwitches(LocalLines.RECHECK_NANOS), start, waitNanos);
                    if (pause < 0) {
                        return null;
                    }
                    interrupted |= pause(() -> ticket.await(pause), interruptible);
                    client.ensureOpen();
                    continue;
                }
                long sentAt = System.nanoTime();
                AcquireResult result = engine.engine().tryAcquire(attempt);
                if (result instanceof AcquireResult.Granted granted) {
                    if (granted.ageNanos() > 0) {
                        // granted by an earlier request (a hand-off): the lease runs from that one
                        sentAt = Math.min(sentAt, System.nanoTime() - granted.ageNanos());
                    }
                    Holding holding =
                            hold(engine, attempt, granted.fencingToken(), sentAt, renewed, threadBound, ticket);
                    if (ticket == null && lined) {
                        holds.lines().grantedOutOfLine(engine, view.key(), attempt.token());
                    }
                    done = true;
                    return holding;
                }
                AcquireResult.Busy busy = (AcquireResult.Busy) result;
                long wait = ticket != null
                        ? ticket.afterBusy(busy)
                        : busy.retryWithin().toNanos();
                if (wait < 0) {
                    // held by a hold of this client: wait in line for its release
                    continue;
                }
                long pause = within(watchingSwitches(wait), start, waitNanos);
                if (pause < 0) {
                    return null;
                }
                interrupted |= pause(
                        () -> engine.engine().awaitChange(attempt, Duration.ofNanos(Math.max(pause, MIN_PAUSE_NANOS))),
                        interruptible);
                client.ensureOpen();
            }
        } finally {
            if (!done) {
                if (ticket != null) {
                    ticket.leave();
                }
                if (ticket == null || ticket.asked()) {
                    holds.abandonQuietly(engine, attempt);
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
    private Holding hold(
            EngineHandle engine,
            Acquisition attempt,
            long fencingToken,
            long sentAt,
            boolean renewed,
            boolean threadBound,
            LocalLines.Ticket ticket) {
        Holding holding = new Holding(client, engine, attempt, fencingToken, renewed, threadBound, sentAt);
        holds.add(holding);
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
        LOG.log(
                Level.INFO,
                "lock '" + holding.lockName() + "' was granted by engine '" + holding.engine.name() + "' "
                        + Durations.format(Duration.ofNanos(System.nanoTime() - sentAt))
                        + " after its request was sent, past its lease of "
                        + Durations.format(holding.leaseTime()) + ": given back, not handed to the caller");
        try {
            holding.giveBack();
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "the late grant of lock '" + holding.lockName()
                            + "' was not given back (its lease has run out anyway): " + e.getMessage());
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
        return engineCount > 1 ? Math.min(pause, SWITCH_WATCH_NANOS) : pause;
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
            budget += settings.failover().unhealthyFor().toNanos()
                    + settings.failover().checkEvery().toNanos();
        }
        return budget;
    }

    private static void parkFor(long nanos, boolean interruptible, LockView view) throws InterruptedException {
        parkUntil(System.nanoTime() + nanos, interruptible, view, "waited to try an unreachable engine again");
    }

    /** Thrown inside an acquisition whose wait saw the client switch engines: it goes on on the new one. */
    private static final class SwitchedWhileWaiting extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final SwitchedWhileWaiting INSTANCE = new SwitchedWhileWaiting();

        private SwitchedWhileWaiting() {
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
}
