package io.cerberus.internal;

import io.cerberus.CerberusMetrics;
import io.cerberus.spi.AcquireResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Takes new holds for one client: drives the acquire state machine ({@link AcquireRun}) on the
 * caller's thread, or hands it to the client's async pool ({@link AsyncAcquisition}).
 *
 * <p>The blocking driver asks on the caller's thread and waits there: in the attempt's line
 * ({@code Ticket.await}), in the engine ({@code awaitChange}), or parked. An interrupt ends an
 * interruptible wait (the run gives up: the attempt is withdrawn) and is kept for the caller of
 * a non-interruptible one, set again on the way out.
 */
final class Acquirer {
    final CerberusClient client;
    final ClientSettings settings;
    final int engineCount;
    final EngineSwitcher switcher;
    /** The failover monitor, or null on a client without failover. */
    final HealthMonitor health;

    final SafeMetrics metrics;
    final LeaseRenewer renewer;
    final LiveHolds holds;
    /** The pool and timer of async acquisitions, made at the first. */
    final AsyncWork async;

    Acquirer(
            CerberusClient client,
            ClientSettings settings,
            int engineCount,
            EngineSwitcher switcher,
            HealthMonitor health,
            SafeMetrics metrics,
            LeaseRenewer renewer,
            LiveHolds holds,
            AsyncWork async) {
        this.client = client;
        this.settings = settings;
        this.engineCount = engineCount;
        this.switcher = switcher;
        this.health = health;
        this.metrics = metrics;
        this.renewer = renewer;
        this.holds = holds;
        this.async = async;
    }

    /**
     * Acquires a new hold, waiting on the calling thread.
     *
     * @return the hold, or null if the wait ran out
     */
    Holding acquire(AcquireRequest request) throws InterruptedException {
        LockView view = request.view();
        AcquireRun run = new AcquireRun(this, request);
        if (request.interruptible() && Thread.interrupted()) {
            client.ensureOpen();
            run.giveUp(CerberusMetrics.AcquireOutcome.INTERRUPTED);
            throw new InterruptedException("interrupted before acquiring " + view.described());
        }
        boolean interrupted = false;
        try {
            AcquireRun.Step step = run.start();
            while (true) {
                switch (step) {
                    case DONE:
                        return run.holding();
                    case ASK:
                        step = ask(run);
                        break;
                    case AWAIT_TURN:
                        try {
                            run.ticket().await(run.nanos());
                        } catch (InterruptedException e) {
                            interrupted = interrupted(run, e);
                        }
                        step = run.woken();
                        break;
                    case AWAIT_CHANGE:
                        try {
                            run.attemptEngine().engine().awaitChange(run.attempt(), Duration.ofNanos(run.nanos()));
                        } catch (InterruptedException e) {
                            interrupted = interrupted(run, e);
                        } catch (RuntimeException e) {
                            step = run.failed(e);
                            break;
                        }
                        step = run.woken();
                        break;
                    default: // PAUSE
                        LockSupport.parkNanos(run.nanos());
                        if (Thread.interrupted()) {
                            interrupted = interrupted(
                                    run, new InterruptedException("interrupted while " + view.described() + " waited"));
                        }
                        step = run.woken();
                        break;
                }
            }
        } catch (RuntimeException | Error e) {
            // a step threw (an engine's failure, or an Error): leave the line and withdraw, as the async driver does
            run.giveUp(CerberusMetrics.AcquireOutcome.FAILED);
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Starts an acquisition that waits on no thread: the run is driven by the engine's wake-ups and
     * the client's timers, its asks made on the client's async pool.
     *
     * @param result the future's value from the hold, or from null when the wait ran out
     * @return the future; cancelling it withdraws the attempt
     */
    <T> CompletableFuture<T> acquireAsync(AcquireRequest request, Function<Holding, T> result) {
        return AsyncAcquisition.start(this, request, result);
    }

    /** Asks the engine for the run's attempt. */
    static AcquireRun.Step ask(AcquireRun run) {
        long sentAt = System.nanoTime();
        AcquireResult result;
        try {
            result = run.attemptEngine().engine().tryAcquire(run.attempt());
        } catch (RuntimeException e) {
            return run.failed(e);
        }
        return run.answered(result, sentAt);
    }

    /**
     * @return true when the interrupt is kept for later (a non-interruptible wait goes on)
     * @throws InterruptedException when the wait is interruptible: the run gave up
     */
    private static boolean interrupted(AcquireRun run, InterruptedException e) throws InterruptedException {
        if (run.request().interruptible()) {
            run.giveUp(CerberusMetrics.AcquireOutcome.INTERRUPTED);
            throw e;
        }
        return true;
    }
}
