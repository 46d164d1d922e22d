package io.cerberus.internal;

import io.cerberus.CerberusMetrics.AcquireOutcome;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.NotifiesChanges;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The async driver of one acquisition: runs its {@link AcquireRun} a step at a time on the client's
 * async pool ({@link AsyncWork}) and holds no thread while it waits. A wait registers a callback —
 * on the attempt's line ({@code Ticket.onTurn}), on the engine when it {@link NotifiesChanges},
 * always on the client's timer for the step's bound — and whichever fires first takes the wait and
 * runs the next step; the others are cancelled.
 *
 * <p>Cancelling the returned future (or completing it from outside) withdraws the attempt: a waiting
 * run is woken and gives up; a run in the middle of a step sees it when the step ends. A grant that
 * races the cancel (answered after it) is released, never left held.
 *
 * <p>Invariants: one step at a time (a step runs only by the one who took the current wait out of
 * {@link #waiting}, or by the step before it); the future is completed exactly once by the run's
 * end, and a hold the future could not take is released.
 *
 * @param <T> what the future gives for a hold (a lease, or an optional one)
 */
final class AsyncAcquisition<T> {
    private static final System.Logger LOG = System.getLogger(AsyncAcquisition.class.getName());

    private final AsyncWork async;
    private final AcquireRun run;
    /** Makes the future's value from the hold, null when the wait ran out (may throw a timeout). */
    private final Function<Holding, T> result;

    private final CompletableFuture<T> future = new CompletableFuture<>();
    /** The wait under way, or null while a step runs. */
    private final AtomicReference<Wait> waiting = new AtomicReference<>();

    private volatile boolean cancelled;

    private AsyncAcquisition(AsyncWork async, AcquireRun run, Function<Holding, T> result) {
        this.async = async;
        this.run = run;
        this.result = result;
    }

    /**
     * Starts an acquisition on the client's async pool.
     *
     * @param result the future's value from the hold, or from null when the wait ran out
     * @return its future; cancelling it withdraws the attempt
     */
    static <T> CompletableFuture<T> start(Acquirer acquirer, AcquireRequest request, Function<Holding, T> result) {
        AsyncAcquisition<T> acquisition =
                new AsyncAcquisition<>(acquirer.async, new AcquireRun(acquirer, request), result);
        acquisition.future.whenComplete((value, failure) -> acquisition.cancel());
        acquirer.async.started(acquisition);
        acquirer.async.execute(() -> acquisition.drive(acquisition.run::start));
        return acquisition.future;
    }

    /** The callbacks of one wait; whoever takes it out of {@link #waiting} ends it and runs the next step. */
    private static final class Wait {
        volatile boolean ended;
        volatile Future<?> timer;
        volatile NotifiesChanges.ChangeWatch watch;
        volatile LocalLines.Ticket ticket;

        void end() {
            ended = true;
            cancelCallbacks();
        }

        /** Cancels what is registered; the step that registers calls it again after each registration. */
        void cancelCallbacks() {
            Future<?> timed = timer;
            if (timed != null) {
                timed.cancel(false);
            }
            NotifiesChanges.ChangeWatch watched = watch;
            if (watched != null) {
                watched.cancel();
            }
            LocalLines.Ticket lined = ticket;
            if (lined != null) {
                lined.stopWaiting();
            }
        }
    }

    /** Runs steps from {@code event} until the run waits or ends. */
    private void drive(Supplier<AcquireRun.Step> event) {
        try {
            if (cancelled) {
                giveUp();
                return;
            }
            AcquireRun.Step step = event.get();
            while (true) {
                if (step == AcquireRun.Step.DONE) {
                    settle(run.holding());
                    return;
                }
                if (cancelled) {
                    giveUp();
                    return;
                }
                switch (step) {
                    case ASK -> step = Acquirer.ask(run);
                    case AWAIT_TURN -> {
                        // read the run before the wait is published: once it is, a callback may run the next step
                        LocalLines.Ticket ticket = run.ticket();
                        Wait wait = new Wait();
                        wait.ticket = ticket;
                        waiting.set(wait);
                        long nanos = ticket.onTurn(() -> wake(wait), run.nanos());
                        if (nanos == 0) {
                            if (!waiting.compareAndSet(wait, null)) {
                                return; // a cancel took the wait: it runs the next step
                            }
                            step = run.woken();
                            continue;
                        }
                        armed(wait, nanos);
                        return;
                    }
                    case AWAIT_CHANGE -> {
                        long nanos = run.nanos();
                        Acquisition attempt = run.attempt();
                        Wait wait = new Wait();
                        waiting.set(wait);
                        try {
                            NotifiesChanges notifies = run.attemptEngine()
                                    .engine()
                                    .ability(NotifiesChanges.class)
                                    .orElse(null);
                            if (notifies != null) {
                                wait.watch = notifies.onChange(attempt, () -> wake(wait));
                            }
                        } catch (RuntimeException e) {
                            if (waiting.compareAndSet(wait, null)) {
                                step = run.failed(e);
                                continue;
                            }
                            return; // a callback or a cancel took the wait: it runs the next step
                        }
                        armed(wait, nanos);
                        return;
                    }
                    default -> { // PAUSE
                        long nanos = run.nanos();
                        Wait wait = new Wait();
                        waiting.set(wait);
                        armed(wait, nanos);
                        return;
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            run.giveUp(AcquireOutcome.FAILED); // a step threw: nothing of it is left behind
            async.ended(this);
            future.completeExceptionally(e);
        }
    }

    /** Sets the wait's timer, after its other callbacks; a wait ended meanwhile is cleaned up again. */
    private void armed(Wait wait, long nanos) {
        wait.timer = async.schedule(() -> wake(wait), nanos);
        if (wait.ended) {
            wait.cancelCallbacks();
        }
        if (cancelled) {
            wake(wait);
        }
    }

    /** A callback of {@code wait} fired: the first one runs the next step on the pool. */
    private void wake(Wait wait) {
        if (waiting.compareAndSet(wait, null)) {
            wait.end();
            async.execute(() -> drive(run::woken));
        }
    }

    /** Wakes the run if it waits (the client closes, or the future was cancelled). */
    void wakeNow() {
        Wait wait = waiting.get();
        if (wait != null) {
            wake(wait);
        }
    }

    /** The future completed, by the run or from outside (a cancel): a waiting run gives up. */
    private void cancel() {
        cancelled = true;
        wakeNow();
    }

    private void giveUp() {
        run.giveUp(AcquireOutcome.CANCELLED);
        async.ended(this);
    }

    /** Completes the future with the run's end; a hold it could not take (cancelled meanwhile) is released. */
    private void settle(Holding holding) {
        async.ended(this);
        T value;
        try {
            value = result.apply(holding);
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
            return;
        }
        if (!future.complete(value) && holding != null) {
            // the grant raced a cancel: give it back, never leave it held
            try {
                holding.release();
            } catch (RuntimeException e) {
                LOG.log(
                        Level.WARNING,
                        "could not release " + holding.described() + ", granted after its acquisition was"
                                + " cancelled; the engine frees it when its lease ends: " + e.getMessage());
            }
        }
    }
}
