package io.cerberus.idempotency;

import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Renews the lease of one attempt that owns its key, every lease/3, until {@link #stop()}.
 *
 * <p>Invariants: a renewal and the attempt's settlement never overlap ({@link #stop()} waits for a
 * renewal in flight, and none starts after it), so a renewal cannot change the record under its own
 * completion; at most one renewal call of an attempt is in flight, on a thread of its own (the
 * scheduler only times them), so one store call that hangs until its timeout delays no other
 * attempt; an attempt that becomes garbage without being settled stops being renewed, and its key
 * is free again after the lease.
 */
final class AttemptRenewal {
    private static final System.Logger LOG = System.getLogger(IdempotencyGuard.class.getName());
    /** Stops renewing attempts that were dropped without being settled. */
    private static final Cleaner DROPPED = Cleaner.create();
    /** Runs the renewal calls; idle threads end after 30 s. */
    private static final ExecutorService CALLS = calls();

    private final IdempotencyStore store;
    private final IdempotencyKey key;
    private final String id;
    private final String token;
    private final Duration lease;
    private final AtomicBoolean lost = new AtomicBoolean();
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final ReentrantLock settling = new ReentrantLock();
    private final ScheduledFuture<?> timer;
    private volatile boolean stopped;
    /** When the last claim or renewal the store confirmed was asked: the lease runs from there at the latest. */
    private volatile long confirmedAskedAt;

    private Cleaner.Cleanable dropped;

    /**
     * @param claimAskedAt when the claim that made this attempt the owner was sent ({@link System#nanoTime()})
     */
    AttemptRenewal(
            IdempotencyStore store,
            IdempotencyKey key,
            String id,
            String token,
            Duration lease,
            long claimAskedAt,
            ScheduledExecutorService scheduler) {
        this.confirmedAskedAt = claimAskedAt;
        this.store = store;
        this.key = key;
        this.id = id;
        this.token = token;
        this.lease = lease;
        long every = Math.max(10, lease.toMillis() / 3);
        this.timer = scheduler.scheduleAtFixedRate(this::start, every, every, TimeUnit.MILLISECONDS);
    }

    private static ExecutorService calls() {
        AtomicInteger threads = new AtomicInteger();
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
            Thread thread = new Thread(task, "cerberus-idempotency-renewal-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Stops the renewals once {@code attempt} is garbage without having been settled. */
    void watch(IdempotencyAttempt<?> attempt) {
        dropped = DROPPED.register(attempt, this::dropped);
    }

    /** @return whether a renewal was refused: the token no longer owned the record */
    boolean lost() {
        return lost.get();
    }

    /**
     * @return when the attempt's claim ends at the latest, as far as this client knows ({@link System#nanoTime()}): a
     *     lease from the moment the last confirmed claim or renewal was sent. The store may keep it longer, never shorter.
     */
    long heldUntilNanos() {
        return confirmedAskedAt + lease.toNanos();
    }

    /** Ends the renewals; waits for one in flight, so it cannot change the record under the settlement. */
    void stop() {
        settling.lock();
        try {
            stopped = true;
        } finally {
            settling.unlock();
        }
        timer.cancel(false);
        if (dropped != null) {
            dropped.clean();
        }
    }

    private void dropped() {
        if (!stopped) {
            stopped = true;
            timer.cancel(false);
            LOG.log(
                    Level.WARNING,
                    "an attempt of " + key + " was dropped without being completed, failed or closed;"
                            + " its key is free again after the lease of " + Durations.format(lease));
        }
    }

    /** On the scheduler: hands the call to a thread of its own, unless one is still in flight. */
    private void start() {
        if (stopped || !inFlight.compareAndSet(false, true)) {
            return;
        }
        try {
            CALLS.execute(this::renew);
        } catch (RejectedExecutionException e) {
            inFlight.set(false);
        }
    }

    private void renew() {
        settling.lock();
        try {
            long asked = System.nanoTime();
            if (!stopped) {
                if (store.renew(id, token, lease)) {
                    confirmedAskedAt = asked;
                } else {
                    lost.set(true);
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not renew the idempotency lease of " + key + ": " + e.getMessage());
        } finally {
            settling.unlock();
            inFlight.set(false);
        }
    }
}
