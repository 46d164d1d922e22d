package io.cerberus.etcd;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Ends the holds whose lease ran out without a renewal: one task on one thread, armed for the
 * earliest deadline. An acquire or a renewal only writes the hold's deadline, and arms the task
 * only when that deadline comes before the armed one, which is rare: leases are mostly alike, so a
 * new deadline is later than those already set. A timer per hold, scheduled on every acquire and
 * cancelled on every release, woke its thread about once per cycle, whenever its queue had run
 * empty.
 *
 * <p>When the task runs it ends every hold due, then arms itself for the earliest deadline left.
 * A hold's key may go a little after its deadline (never before): that only keeps others waiting
 * that much longer.
 */
final class ExpirySweep {
    /** No task armed. {@link System#nanoTime()} taking exactly this value is not a case to handle. */
    private static final long NONE = Long.MIN_VALUE;
    /** A longer lease waits this long: a deadline beyond it could overflow the clock's arithmetic. */
    private static final Duration LONGEST = Duration.ofDays(365L * 100);

    private final ScheduledExecutorService timer;
    private final Supplier<Collection<AttemptState>> states;
    private final Consumer<AttemptState> expire;
    private final AtomicLong armedFor = new AtomicLong(NONE);

    /**
     * @param timer the one thread the task runs on
     * @param states the engine's attempts; only granted ones have a deadline
     * @param expire ends one hold whose deadline passed
     */
    ExpirySweep(
            ScheduledExecutorService timer, Supplier<Collection<AttemptState>> states, Consumer<AttemptState> expire) {
        this.timer = timer;
        this.states = states;
        this.expire = expire;
    }

    /** Sets a hold's deadline to its lease from now; call before the hold is marked granted. */
    void startLease(AttemptState state) {
        Duration lease = state.attempt.lease();
        long deadline = System.nanoTime() + (lease.compareTo(LONGEST) > 0 ? LONGEST : lease).toNanos();
        state.expiresAt = deadline;
        arm(deadline);
    }

    private void arm(long deadline) {
        while (true) {
            long armed = armedFor.get();
            if (armed != NONE && armed - deadline <= 0) {
                return;
            }
            if (armedFor.compareAndSet(armed, deadline)) {
                try {
                    timer.schedule(this::sweep, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException closed) {
                    // the engine is closing: its keys go with the client lease
                }
                return;
            }
        }
    }

    /** Ends the holds due and arms for the next deadline. */
    void sweep() {
        armedFor.set(NONE);
        long now = System.nanoTime();
        long next = 0;
        boolean any = false;
        for (AttemptState state : states.get()) {
            if (!state.granted) {
                continue;
            }
            long deadline = state.expiresAt;
            if (deadline - now <= 0) {
                expire.accept(state);
            } else if (!any || deadline - next < 0) {
                next = deadline;
                any = true;
            }
        }
        if (any) {
            arm(next);
        }
    }
}
