package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.LeaseLossListener;
import io.cerberus.LockLostException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * One granted acquisition: the lease a user holds, whether through the thread-bound facade or as
 * a {@link Lease} handle.
 *
 * <p>State moves HELD → LOST or HELD → RELEASED, and LOST → RELEASED; never back. Every move
 * happens under {@code stateLock}, which the renewer also holds while a renewal of this lease is
 * in flight: so once {@link #release()} has the lock, no renewal is running and none will be sent.
 *
 * <p>Validity is judged conservatively on the client's monotonic clock: a lease is valid until
 * the lease time after the moment the last successful acquire or renew request was <em>sent</em>
 * (the engine started its countdown no earlier), less what the engine says its clocks may drift
 * ({@link io.cerberus.spi.LockEngine#validity}). A process paused past its lease therefore sees
 * {@link #isValid()} false on waking, before any renewal is tried. A renewal that cannot reach
 * the engine makes the lease uncertain: {@link #isValid()} is false from the first failure, and
 * true again if a retry succeeds before the lease runs out; only then is it lost.
 */
final class Holding implements Lease {
    private static final System.Logger LOG = System.getLogger(Holding.class.getName());

    private enum State {
        HELD,
        LOST,
        RELEASED
    }

    final CerberusClient client;
    final EngineHandle engine;
    final Acquisition acquisition;
    final boolean renewed;
    final boolean threadBound;
    private final long fencingToken;
    private final long grantedNanos = System.nanoTime();
    /** Whether the lease can run out: false for a renewed hold on a session-bound engine. */
    private final boolean expires;
    /** How long after a request was sent the hold counts: the lease, less the engine's clock drift. */
    private final long validityNanos;

    final ReentrantLock stateLock = new ReentrantLock();
    /** Written under stateLock; read without it so isValid() never waits for a renewal round trip. */
    private volatile State state = State.HELD;

    private LockLostException lostReason;
    private volatile long validUntilNanos;
    /** A renewal could not reach the engine and no later one has yet: the hold is not confirmed. */
    private volatile boolean uncertain;

    private final List<LeaseLossListener> listeners = new ArrayList<>();
    /** Told on the event thread when the hold turns uncertain (true) or certain again (false); or null. */
    private volatile Consumer<Boolean> doubts;
    /** Holds of the same lock on engines in their lock-delay after a switch, released with this one. */
    private final List<Holding> lockDelayHolds = new CopyOnWriteArrayList<>();
    /** Renewals in a row that could not reach the engine, reset by one that does; guarded by stateLock. */
    private int failedRenewals;
    /** The renewal or expiry task now scheduled; guarded by stateLock. */
    LeaseRenewer.Task task;

    /** Told the hold's release or loss, for traces; set once the acquisition that made it ended. */
    private volatile SafeMetrics.ObservedHold observed = SafeMetrics.ObservedHold.NONE;

    /** The fence, once read ({@link #fence()}). */
    private volatile Fence fence;

    /** Thread-bound bookkeeping, touched only by the owning thread. */
    int holdCount = 1;

    int nestedReads;

    Holding(
            CerberusClient client,
            EngineHandle engine,
            Acquisition acquisition,
            long fencingToken,
            boolean renewed,
            boolean threadBound,
            long requestSentNanos) {
        this.client = client;
        this.engine = engine;
        this.acquisition = acquisition;
        this.fencingToken = fencingToken;
        this.renewed = renewed;
        this.threadBound = threadBound;
        this.expires = !(renewed && engine.has(Capability.SESSION_BOUND));
        this.validityNanos = validityNanos(engine, acquisition.lease());
        this.validUntilNanos = requestSentNanos + validityNanos;
    }

    private static long validityNanos(EngineHandle engine, Duration lease) {
        Duration validity = engine.engine().validity(lease);
        if (validity == null || validity.isNegative() || validity.isZero() || validity.compareTo(lease) > 0) {
            throw new IllegalStateException("engine '" + engine.name() + "' (" + engine.uri() + ") gave a validity of "
                    + validity + " for a lease of " + Durations.format(lease)
                    + "; it must be positive and at most the lease");
        }
        return validity.toNanos();
    }

    @Override
    public String lockName() {
        return acquisition.key().name();
    }

    /** @return how messages name this hold's lock: {@code lock 'x'}, or a semaphore's permit */
    String described() {
        return SemaphoreView.describe(lockName());
    }

    @Override
    public String engineName() {
        return engine.name();
    }

    /** Adds a hold of the same lock on an engine in its lock-delay, to be released with this one. */
    void addLockDelayHold(Holding old) {
        lockDelayHolds.add(old);
    }

    @Override
    public long fencingToken() {
        if (fencingToken < 0) {
            throw new UnsupportedCapabilityException(
                    "engine '" + engine.name() + "' (" + engine.uri() + ") gives no fencing tokens"
                            + engine.engine()
                                    .whyNot(Capability.FENCING)
                                    .map(why -> ": " + why)
                                    .orElse("")
                            + "; engines with fencing tokens: " + EngineRegistry.schemesWith(Capability.FENCING));
        }
        return fencingToken;
    }

    @Override
    public Fence fence() {
        Fence known = fence;
        if (known == null) {
            known = client.epochs().fence(this);
            fence = known;
        }
        return known;
    }

    @Override
    public boolean isValid() {
        return state == State.HELD && !uncertain && !localLeaseOver();
    }

    @Override
    public Duration leaseTime() {
        return acquisition.lease();
    }

    @Override
    public Optional<Duration> silentHolderExpiry() {
        return engine.engine().silentHolderExpiry(acquisition.lease());
    }

    boolean expires() {
        return expires;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    /** @return how long after a request was sent the hold counts (the lease, less the engine's clock drift) */
    long validityNanos() {
        return validityNanos;
    }

    void extendedFrom(long requestSentNanos) {
        validUntilNanos = requestSentNanos + validityNanos;
        certain(true);
        if (failedRenewals > 0) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "renewed " + this + " again after " + failedRenewals + " failed "
                            + (failedRenewals == 1 ? "try" : "tries"));
            failedRenewals = 0;
        }
    }

    /** A renewal failed to reach the engine: invalid until a renewal succeeds or the lease runs out. */
    void markUncertain() {
        certain(false);
    }

    /**
     * Counts a renewal that could not reach the engine; called under {@code stateLock}.
     *
     * @return how many renewals in a row have failed so far, this one included
     */
    int renewalFailed() {
        markUncertain();
        return ++failedRenewals;
    }

    /** @return how many renewals in a row have failed (read under {@code stateLock}) */
    int failedRenewals() {
        return failedRenewals;
    }

    /** The engine vouches for the hold again, after it was uncertain. */
    void confirmed() {
        certain(true);
    }

    /** Watches this hold's doubts (leadership): one watcher, told of each change on the event thread. */
    void watchDoubts(Consumer<Boolean> watcher) {
        doubts = watcher;
    }

    private void certain(boolean vouched) {
        boolean was = uncertain;
        uncertain = !vouched;
        Consumer<Boolean> watcher = doubts;
        if (watcher != null && was == vouched) {
            client.events().run("a leadership listener of " + described(), () -> watcher.accept(!vouched));
        }
    }

    /** @return whether the hold was released (or given back) */
    boolean isReleased() {
        return state == State.RELEASED;
    }

    boolean localLeaseOver() {
        return expires && System.nanoTime() - validUntilNanos >= 0;
    }

    /** @return whether the lease is held (not lost, not released); caller holds stateLock */
    boolean isHeldLocked() {
        return state == State.HELD;
    }

    @Override
    public void onLost(LeaseLossListener listener) {
        Arguments.notNull("listener", listener);
        LockLostException already;
        stateLock.lock();
        try {
            already = lostReason;
            if (already == null) {
                listeners.add(listener);
            }
        } finally {
            stateLock.unlock();
        }
        if (already != null) {
            client.events().notify(this, List.of(listener), already);
        }
    }

    /** Follows this hold with {@code hold}; told at once if the hold was lost already. */
    void observe(SafeMetrics.ObservedHold hold) {
        observed = hold;
        LockLostException reason = null;
        stateLock.lock();
        try {
            if (state == State.LOST) {
                reason = lostReason;
            }
        } finally {
            stateLock.unlock();
        }
        if (reason != null) {
            hold.lost(reason);
        }
    }

    /** Throws the loss of this lease, if it is lost. */
    void ensureNotLost() {
        stateLock.lock();
        try {
            if (state == State.LOST) {
                throw copy(lostReason);
            }
            if (localLeaseOver()) {
                throw new LockLostException(describeLoss(
                        "its lease of " + Durations.format(acquisition.lease()) + " ran out before it was renewed"));
            }
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * Marks the lease lost and tells the listeners. Does nothing if it is no longer held.
     *
     * @param reason why, in words that finish "lock 'x' was lost: ..."
     * @param cause the failure behind it, may be null
     */
    void markLost(String reason, Throwable cause) {
        stateLock.lock();
        try {
            if (!markLostLocked(reason, cause)) {
                return;
            }
        } finally {
            stateLock.unlock();
        }
        fireLost();
    }

    /** As {@link #markLost}, with stateLock held; the caller calls {@link #fireLost()} after unlocking. */
    boolean markLostLocked(String reason, Throwable cause) {
        if (state != State.HELD) {
            return false;
        }
        state = State.LOST;
        lostReason = new LockLostException(describeLoss(reason), cause);
        if (task != null) {
            task.cancel();
            task = null;
        }
        return true;
    }

    void fireLost() {
        List<LeaseLossListener> toTell;
        LockLostException reason;
        stateLock.lock();
        try {
            toTell = List.copyOf(listeners);
            listeners.clear();
            reason = lostReason;
        } finally {
            stateLock.unlock();
        }
        client.holds.lost(this, reason);
        client.metrics().loss(engine, acquisition.mode().label());
        observed.lost(reason);
        if (!toTell.isEmpty()) {
            client.events().notify(this, toTell, reason);
        }
    }

    private String describeLoss(String reason) {
        String token = fencingToken < 0 ? "" : " (fencing token " + fencingToken + ")";
        return described() + token + " on engine '" + engine.name() + "' ("
                + engine.uri() + ") was lost: " + reason
                + "; another holder may have taken it, so whatever it protected must be checked";
    }

    @Override
    public void close() {
        if (threadBound) {
            throw new UnsupportedOperationException(
                    "the lease of " + described() + " belongs to a thread's lock() hold: release it with unlock()");
        }
        release();
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        if (threadBound) {
            return CompletableFuture.failedFuture(new UnsupportedOperationException(
                    "the lease of " + described() + " belongs to a thread's lock() hold: release it with unlock()"));
        }
        CompletableFuture<Void> released = new CompletableFuture<>();
        client.async.execute(() -> {
            try {
                release();
                released.complete(null);
            } catch (RuntimeException | Error e) {
                released.completeExceptionally(e);
            }
        });
        return released;
    }

    /**
     * Releases the hold in the engine, once. Waits for a renewal in flight to finish first.
     *
     * @throws LockLostException if the lease was lost before the release
     */
    void release() {
        LockLostException lost = null;
        boolean newlyLost = false;
        boolean releasing = false;
        stateLock.lock();
        try {
            if (state == State.RELEASED) {
                return;
            }
            releasing = true;
            releaseLockDelayHolds();
            State before = state;
            state = State.RELEASED;
            if (task != null) {
                task.cancel();
                task = null;
            }
            boolean released;
            try {
                released = client.holds.releaseInEngine(this);
            } catch (CerberusException | IllegalStateException e) {
                if (before == State.LOST) {
                    throw copy(lostReason);
                }
                throw new EngineUnavailableException(
                        "could not release " + described() + " on engine '"
                                + engine.name() + "' (" + engine.uri()
                                + "); it is no longer renewed and the engine frees it"
                                + " when its lease of " + Durations.format(acquisition.lease()) + " ends",
                        e);
            }
            if (before == State.LOST) {
                lost = copy(lostReason);
            } else if (!released) {
                lostReason = new LockLostException(
                        describeLoss("the engine no longer had it at release (lease expired or taken over)"));
                lost = copy(lostReason);
                newlyLost = true;
            }
        } finally {
            stateLock.unlock();
            client.holds.forget(this);
            if (releasing) {
                client.metrics().release(engine, acquisition.mode().label(), grantedNanos);
                if (!newlyLost) {
                    observed.released(); // a hold lost before is told its loss instead, once
                }
            }
        }
        if (newlyLost) {
            fireLost();
        }
        if (lost != null) {
            throw lost;
        }
    }

    /**
     * Gives back a grant never handed to a caller (its answer came after its lease had run out):
     * released in the engine, or passed on to the next in its line, with no loss reported.
     */
    void giveBack() {
        stateLock.lock();
        try {
            state = State.RELEASED;
        } finally {
            stateLock.unlock();
        }
        try {
            client.holds.releaseInEngine(this);
        } finally {
            client.holds.forget(this);
        }
    }

    /** Gives back the lock-delay holds; their failures are logged, the engines free them when their leases end. */
    private void releaseLockDelayHolds() {
        for (Holding old : lockDelayHolds) {
            try {
                old.release();
            } catch (RuntimeException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "could not release the lock-delay hold of " + described() + " on engine '" + old.engine.name()
                                + "': " + e.getMessage());
            }
        }
        lockDelayHolds.clear();
    }

    private static LockLostException copy(LockLostException reason) {
        // a fresh exception so the stack trace shows the caller that met the loss
        return new LockLostException(reason.getMessage(), reason.getCause());
    }

    @Override
    public String toString() {
        return acquisition + " on " + engine.name();
    }
}
