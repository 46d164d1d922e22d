package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.CerberusMetrics.AcquireOutcome;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Backoff;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;

/**
 * One call to acquire, as a state machine that never blocks: the acquire loop of the blocking and
 * the async callers alike ({@link Acquirer} drives it on the caller's thread, {@link AsyncAcquisition}
 * on the client's async pool). Each method takes what happened and returns the next {@link Step}
 * for the driver to do: ask the engine, wait for the attempt's turn in its local line, wait for a
 * change in the engine, pause (an outage, a lock-delay), or stop ({@link Step#DONE}).
 *
 * <p>What it decides, per attempt (one owner token for the attempt's life): an exclusive attempt on
 * an engine that lines up locally asks only in its turn ({@link LocalLines}); a busy answer waits at
 * most the engine's retry bound, the switch-watch interval and the caller's wait; a wait that sees
 * a switch withdraws and goes on on the new engine; an unreachable engine is tried again within the
 * wait (outage pauses, 50 ms doubling to 1 s); an engine in its lock-delay must grant too (or its
 * lock-delay is waited out); a grant answered after its lease ran out is given back and asked again.
 *
 * <p>Invariants: every way out either ends in {@code DONE} with a hold registered in
 * {@link LiveHolds} (its renewal started) or a timeout, or has left the attempt's line, withdrawn
 * the attempt in the engine and given back the holds taken on the way (a driver calls {@link #giveUp}
 * when it stops the run, and when a step throws: the run leaves that to its driver). The
 * metrics see one outcome per run, its observer the first busy answer and the end, and a run that
 * found its lock busy is counted in the client's {@link Contention}. Not thread-safe: one driver
 * step at a time.
 */
final class AcquireRun {
    private static final System.Logger LOG = System.getLogger(AcquireRun.class.getName());
    private static final long MIN_PAUSE_NANOS = 1_000_000L;
    /** The first pause before trying an unreachable engine again; it doubles up to the max, jittered. */
    private static final Duration FIRST_OUTAGE_PAUSE = Duration.ofMillis(50);

    private static final Duration MAX_OUTAGE_PAUSE = Duration.ofSeconds(1);
    /** How often a waiter of a client with several engines and no failover looks for a switch by hand. */
    private static final long SWITCH_WATCH_NANOS = 250_000_000L;

    /** What the driver does next. */
    enum Step {
        /** Call {@code tryAcquire(attempt())} on {@code attemptEngine()}, then {@link #answered} or {@link #failed}. */
        ASK,
        /** Wait for the attempt's turn in its line ({@code ticket()}), at most {@code nanos()}, then {@link #woken}. */
        AWAIT_TURN,
        /** Wait for a change of the attempt's lock in the engine, at most {@code nanos()}, then {@link #woken}. */
        AWAIT_CHANGE,
        /** Wait {@code nanos()}, then {@link #woken}. */
        PAUSE,
        /** Stop: {@code holding()} is the hold, or null when the wait ran out. */
        DONE
    }

    private final Acquirer acquirer;
    private final AcquireRequest request;
    private final LockView view;
    /**
     * Who the attempts name as their holder: the identity the request gives, else the thread that
     * made the call and the observer's note.
     */
    private final String holder;
    /** Told the run's first busy answer and its end, for traces. */
    private final SafeMetrics.ObservedWait observed;
    /** Whether the lock was found busy, and who held it then if that was read (else empty). */
    private boolean wasBusy;

    private String busyHolder = "";

    private final Backoff outagePauses = new Backoff(FIRST_OUTAGE_PAUSE, MAX_OUTAGE_PAUSE);
    /** Where the hold is sought: the current engine when the run started or last moved. */
    private EngineHandle engine;
    /** The capability the lock's mode needs, or null. */
    private Capability needed;
    /** The old engines in their lock-delay when the run began on {@link #engine}. */
    private List<EngineSwitcher.OldEngineInLockDelay> inLockDelay = List.of();
    /** The hold on {@link #engine} while holds on engines in their lock-delay are sought; else null. */
    private Holding main;

    private int lockDelayIndex;
    /** The attempt under way (null between attempts), its engine, request and line. */
    private Acquisition attempt;

    private EngineHandle attemptEngine;
    private AcquireRequest attemptRequest;
    private boolean followSwitch;
    private boolean lined;
    private LocalLines.Ticket ticket;
    /** The wait of the step returned last, in nanoseconds. */
    private long nanos;
    /** When a {@link Step#PAUSE} ends, and whether it is an outage pause (else a lock-delay). */
    private long pauseUntil;

    private boolean outagePause;
    private Holding holding;
    private boolean finished;

    AcquireRun(Acquirer acquirer, AcquireRequest request) {
        this.acquirer = acquirer;
        this.request = request;
        this.view = request.view();
        this.engine = acquirer.switcher.current();
        this.observed = acquirer.metrics.acquiring(engine, view.mode().label(), view.name());
        if (request.holder() != null) {
            this.holder = request.holder(); // an identity (a leadership's participant), kept as given
        } else {
            String note = observed.holderNote();
            String described = HolderIdentity.describeCurrentThread();
            this.holder = note.isEmpty() ? described : described + " " + note;
        }
    }

    Acquisition attempt() {
        return attempt;
    }

    EngineHandle attemptEngine() {
        return attemptEngine;
    }

    LocalLines.Ticket ticket() {
        return ticket;
    }

    long nanos() {
        return nanos;
    }

    Holding holding() {
        return holding;
    }

    AcquireRequest request() {
        return request;
    }

    /** @return the first step */
    Step start() {
        try {
            return beginOnEngine();
        } catch (EngineUnavailableException e) {
            return failed(e); // a standby opened late, say, is tried again within the wait
        }
    }

    /**
     * The engine answered the attempt's ask.
     *
     * @param sentAt when the ask was sent ({@link System#nanoTime()}): a lease counts from then
     */
    Step answered(AcquireResult result, long sentAt) {
        try {
            if (result instanceof AcquireResult.Granted granted) {
                if (granted.ageNanos() > 0) {
                    // granted by an earlier request (a hand-off): the lease runs from that one
                    sentAt = Math.min(sentAt, System.nanoTime() - granted.ageNanos());
                }
                Holding taken = hold(granted.fencingToken(), sentAt);
                if (ticket == null && lined) {
                    acquirer.holds.lines().grantedOutOfLine(attemptEngine, view.key(), attempt.token());
                }
                return attemptGranted(taken);
            }
            AcquireResult.Busy busy = (AcquireResult.Busy) result;
            busy();
            long wait =
                    ticket != null ? ticket.afterBusy(busy) : busy.retryWithin().toNanos();
            if (wait < 0) {
                return next(); // held by a hold of this client: wait in line for its release
            }
            long pause = within(watchingSwitches(wait));
            if (pause < 0) {
                return attemptTimedOut();
            }
            nanos = Math.max(pause, MIN_PAUSE_NANOS);
            return Step.AWAIT_CHANGE;
        } catch (EngineUnavailableException e) {
            return failed(e);
        }
    }

    /**
     * An engine call of the last step failed (its ask, or its wait for a change). An unreachable
     * engine is tried again within the wait; any other failure is thrown again, for the driver to give up the run.
     */
    Step failed(RuntimeException failure) {
        withdraw();
        if (!(failure instanceof EngineUnavailableException)) {
            throw failure;
        }
        if (main != null) {
            return lockDelayUnreachable("cannot be reached (" + failure.getMessage() + ")");
        }
        long left = outageBudgetNanos() - (System.nanoTime() - request.start());
        if (left <= 0) {
            throw failure;
        }
        // an engine that cannot be reached is tried again within the wait, on whichever engine is current
        LOG.log(
                Level.DEBUG,
                view.described() + ": engine '" + engine.name() + "' cannot be reached (" + failure.getMessage()
                        + "); trying again within the wait");
        return pause(Math.min(left, outagePauses.next().toNanos()), true);
    }

    /** The wait of the last step ended: its time ran out, or it was woken (maybe for no reason). */
    Step woken() {
        try {
            if (attempt == null) {
                long left = pauseUntil - System.nanoTime();
                if (left > 0) {
                    // woken early, by the client closing say: a closed client's driver would wake it again at once
                    acquirer.client.ensureOpen();
                    nanos = left;
                    return Step.PAUSE;
                }
                if (outagePause) {
                    acquirer.client.ensureOpen();
                    engine = acquirer.switcher.current();
                    return beginOnEngine();
                }
                lockDelayIndex++;
                return nextLockDelay();
            }
            acquirer.client.ensureOpen();
            return next();
        } catch (EngineUnavailableException e) {
            return failed(e);
        }
    }

    /**
     * The driver stops the run (interrupted, cancelled, or a step threw): the attempt is withdrawn, holds taken on
     * the way are given back. Does nothing after the run finished.
     */
    void giveUp(AcquireOutcome outcome) {
        if (finished) {
            return;
        }
        withdraw();
        if (main != null) {
            Holding taken = main;
            main = null;
            releaseQuietly(taken);
        }
        finish(outcome);
    }

    private Step beginOnEngine() {
        acquirer.client.ensureOpen();
        inLockDelay = acquirer.switcher.inLockDelay();
        needed = view.mode().capability().orElse(null);
        if (needed != null) {
            engine.require(needed);
        }
        return beginAttempt(engine, request, true);
    }

    private Step beginAttempt(EngineHandle on, AcquireRequest asked, boolean followingSwitches) {
        attemptEngine = on;
        attemptRequest = asked;
        followSwitch = followingSwitches;
        attempt = new Acquisition(view.key(), view.mode(), Tokens.next(), holder, asked.lease());
        LinesUpLocally lining = view.mode() == LockMode.EXCLUSIVE
                ? on.engine().ability(LinesUpLocally.class).orElse(null)
                : null;
        lined = lining != null;
        ticket = lined && request.waitNanos() != 0 ? acquirer.holds.lines().enter(on, attempt, lining) : null;
        return next();
    }

    /** The top of an attempt's loop: follow a switch, take a hand-off, wait in line, or ask. */
    private Step next() {
        if (followSwitch && acquirer.switcher.current() != attemptEngine) {
            withdraw(); // the wait goes on where new acquisitions go now
            engine = acquirer.switcher.current();
            return beginOnEngine();
        }
        LocalLines.Handed handed = ticket != null ? ticket.takeHanded() : null;
        if (handed != null) {
            // the holder's release granted it to this attempt, which sent nothing
            return attemptGranted(hold(handed.fencingToken(), handed.sentNanos()));
        }
        if (ticket != null && !ticket.mayAsk()) {
            busy(); // another attempt of this client holds it or is ahead in line
            long pause = within(watchingSwitches(LocalLines.RECHECK_NANOS));
            if (pause < 0) {
                return attemptTimedOut();
            }
            nanos = pause;
            return Step.AWAIT_TURN;
        }
        return Step.ASK;
    }

    /** The attempt holds (or was given back as granted too late, when the lease had run out). */
    private Step attemptGranted(Holding taken) {
        attempt = null;
        ticket = null;
        if (taken.isReleased()) {
            // granted too late and given back: try again within the wait
            if (request.waitNanos() >= 0 && System.nanoTime() - request.start() - request.waitNanos() >= 0) {
                return timedOut();
            }
            return beginAttempt(attemptEngine, attemptRequest, followSwitch);
        }
        if (main == null) {
            if (inLockDelay.isEmpty()) {
                return done(taken);
            }
            main = taken;
            lockDelayIndex = 0;
            return nextLockDelay();
        }
        main.addLockDelayHold(taken);
        lockDelayIndex++;
        return nextLockDelay();
    }

    /**
     * Takes the lock on the next old engine in its lock-delay too, or, when that engine cannot be
     * reached, waits for its lock-delay to end: by then every lease it granted has run out.
     */
    private Step nextLockDelay() {
        while (lockDelayIndex < inLockDelay.size()) {
            EngineSwitcher.OldEngineInLockDelay inDelay = inLockDelay.get(lockDelayIndex);
            if (inDelay.engine() == engine
                    || needed != null && !inDelay.engine().has(needed)) {
                lockDelayIndex++;
                continue;
            }
            if (acquirer.health != null && !acquirer.health.passing(inDelay.engine())) {
                return lockDelayUnreachable("fails its health checks");
            }
            return beginAttempt(inDelay.engine(), request.lockDelayHold(), false);
        }
        Holding taken = main;
        main = null;
        return done(taken);
    }

    private Step lockDelayUnreachable(String why) {
        EngineSwitcher.OldEngineInLockDelay inDelay = inLockDelay.get(lockDelayIndex);
        EngineHandle old = inDelay.engine();
        long left = inDelay.untilNanos() - System.nanoTime();
        if (left <= 0) {
            lockDelayIndex++;
            return nextLockDelay();
        }
        if (request.waitNanos() >= 0 && request.start() + request.waitNanos() - inDelay.untilNanos() < 0) {
            LOG.log(
                    Level.INFO,
                    view.described() + " not taken: engine '" + old.name() + "' " + why
                            + " and its lock-delay lasts longer than the wait");
            return timedOut();
        }
        LOG.log(
                Level.INFO,
                view.described() + " waits " + Durations.format(Duration.ofNanos(left))
                        + " for the lock-delay of engine '" + old.name() + "', which " + why
                        + ": a hold it granted may still be live until then");
        return pause(left, false);
    }

    private Step pause(long pauseNanos, boolean outage) {
        nanos = pauseNanos;
        pauseUntil = System.nanoTime() + pauseNanos;
        outagePause = outage;
        return Step.PAUSE;
    }

    private Step attemptTimedOut() {
        withdraw();
        return timedOut();
    }

    private Step timedOut() {
        if (main != null) {
            Holding taken = main;
            main = null;
            releaseQuietly(taken);
        }
        finish(AcquireOutcome.TIMED_OUT);
        return Step.DONE;
    }

    private Step done(Holding taken) {
        holding = taken;
        finish(AcquireOutcome.GRANTED);
        return Step.DONE;
    }

    private void finish(AcquireOutcome outcome) {
        if (!finished) {
            finished = true;
            acquirer.metrics.acquisition(engine, view.mode().label(), outcome, request.start());
            if (wasBusy && (outcome == AcquireOutcome.GRANTED || outcome == AcquireOutcome.TIMED_OUT)) {
                acquirer.client.contention.record(
                        view.name(),
                        System.nanoTime() - request.start(),
                        outcome == AcquireOutcome.TIMED_OUT,
                        busyHolder);
            }
            SafeMetrics.ObservedHold observing = observed.ended(outcome);
            if (holding != null) {
                holding.observe(observing);
            }
        }
    }

    /** Tells the observer, the first time, that the lock is busy, and who holds it if it asks. */
    private void busy() {
        if (!wasBusy) {
            wasBusy = true;
            busyHolder = observed.wantsHolder() && request.waitNanos() != 0 ? holderNow() : "";
            observed.busy(busyHolder);
        }
    }

    /**
     * @return who holds the lock now, as its holder described itself, read from the attempt's
     *     engine; empty when the engine cannot list its holds, or cannot be read now
     */
    private String holderNow() {
        try {
            return attemptEngine
                    .engine()
                    .ability(Inspects.class)
                    .filter(lister -> attemptEngine.has(Capability.INSPECT))
                    .map(lister -> lister.inspectLock(view.key().namespace(), view.name()))
                    .flatMap(holds -> holds.stream().map(LockInfo::holder).reduce((a, b) -> a + ", " + b))
                    .orElse("");
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, view.described() + ": who holds it could not be read: " + e.getMessage());
            return "";
        }
    }

    /** Leaves the attempt's line and withdraws it in the engine if it may have asked. */
    private void withdraw() {
        if (attempt == null) {
            return;
        }
        Acquisition given = attempt;
        LocalLines.Ticket left = ticket;
        attempt = null;
        ticket = null;
        if (left != null) {
            left.leave();
        }
        if (left == null || left.asked()) {
            acquirer.holds.abandonQuietly(attemptEngine, given);
        }
    }

    /**
     * Makes the hold of a granted attempt: counted live, its line (if any) left, its renewal
     * scheduled; a grant whose answer came after its lease ran out is given back (it comes back
     * released).
     *
     * @param sentAt when the request that granted it was sent: the lease counts from then
     */
    private Holding hold(long fencingToken, long sentAt) {
        Holding taken = new Holding(
                acquirer.client,
                attemptEngine,
                attempt,
                fencingToken,
                attemptRequest.renewed(),
                attemptRequest.threadBound(),
                sentAt);
        acquirer.holds.add(taken);
        if (ticket != null) {
            ticket.granted(attempt.token());
        }
        if (taken.localLeaseOver()) {
            giveBackLate(taken, sentAt);
            return taken;
        }
        acquirer.switcher.granted(attemptEngine, attempt.lease());
        acquirer.renewer.start(taken);
        return taken;
    }

    /**
     * Gives back a grant whose answer arrived after its lease had run out, judged from when its
     * request was sent (the caller was paused, or the answer was slow): the engine may already have
     * granted the lock to another, so the caller is never told it holds it.
     */
    private static void giveBackLate(Holding late, long sentAt) {
        LOG.log(
                Level.INFO,
                late.described() + " was granted by engine '" + late.engine.name() + "' "
                        + Durations.format(Duration.ofNanos(System.nanoTime() - sentAt))
                        + " after its request was sent, past its lease of "
                        + Durations.format(late.leaseTime()) + ": given back, not handed to the caller");
        try {
            late.giveBack();
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "the late grant of " + late.described() + " was not given back (its lease has run out anyway): "
                            + e.getMessage());
        }
    }

    private static void releaseQuietly(Holding taken) {
        try {
            taken.release();
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "could not give back " + taken.described() + " on engine '" + taken.engine.name()
                            + "' after failing to take it on an engine in its lock-delay: " + e.getMessage());
        }
    }

    /**
     * @return {@code pause}, cut to the failover check interval on a client with failover (to a
     *     quarter of a second on other clients of several engines): a waiter then sees a switch
     *     soon and goes on waiting on the new engine
     */
    private long watchingSwitches(long pause) {
        if (acquirer.health != null) {
            return Math.min(pause, acquirer.settings.failover().checkEvery().toNanos());
        }
        return acquirer.engineCount > 1 ? Math.min(pause, SWITCH_WATCH_NANOS) : pause;
    }

    /**
     * How long an acquisition keeps trying an engine that cannot be reached: its own wait, or for
     * a wait without end, the connect timeout (plus the time failover takes to switch, on a client
     * with failover); {@code tryLock()} (no wait) fails at once.
     */
    private long outageBudgetNanos() {
        if (request.waitNanos() >= 0) {
            return request.waitNanos();
        }
        long budget = acquirer.settings.connectTimeout().toNanos();
        if (acquirer.health != null) {
            budget += acquirer.settings.failover().unhealthyFor().toNanos()
                    + acquirer.settings.failover().checkEvery().toNanos();
        }
        return budget;
    }

    /** @return {@code pause} cut to what is left of the caller's wait; -1 if nothing is left */
    private long within(long pause) {
        if (request.waitNanos() < 0) {
            return pause;
        }
        long left = request.waitNanos() - (System.nanoTime() - request.start());
        return left <= 0 ? -1 : Math.min(pause, left);
    }
}
