package io.cerberus.etcd;

import io.cerberus.EngineUnavailableException;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Sends requests to etcd with a deadline. Every request this engine sends is safe to repeat (a
 * create-if-absent keyed by lease and number, a delete that compares the create revision, reads,
 * keep-alives), so a request that has not been answered after a quarter of the timeout is sent
 * again, to whichever member the client now talks to: a request stuck on a member that died is
 * not waited out. The first answer wins; after the whole timeout the call fails with
 * {@link EngineUnavailableException} naming the redacted URI. Waiting for a reply is not
 * interruptible (it is bounded by the timeout): an interrupt is kept for the caller, so the store
 * and this client never disagree about whether a request was made.
 */
final class EtcdRequests {
    private static final long FAILURE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * Requests of one client out at once, resends included: thousands of waiters (virtual threads)
     * sending together, each resent after a quarter of the timeout, would have etcd refuse them all
     * ("too many requests"); over this the callers wait their turn within their timeout.
     */
    static final int MAX_IN_FLIGHT = 128;

    /**
     * Requests that free or keep what is held (deletes of releases, abandons and expiries, the
     * lease's keep-alives) have permits of their own, so waiters asking by the thousand never hold
     * them back: a release stuck behind the asks would leave its lock taken until its lease ran out.
     */
    static final int MAX_IN_FLIGHT_FREEING = 32;

    private final String describe;
    private final Duration timeout;
    /** A quarter of the timeout, made once: {@link Duration#dividedBy(long)} computes in {@code BigDecimal}. */
    private final Duration quarter;

    private final Semaphore inFlightPermits = new Semaphore(MAX_IN_FLIGHT);
    private final Semaphore freeingPermits = new Semaphore(MAX_IN_FLIGHT_FREEING);

    /** @return the engine as shown in messages (its password redacted) */
    String describe() {
        return describe;
    }

    EtcdRequests(String describe, Duration timeout) {
        this.describe = describe;
        this.timeout = timeout;
        this.quarter = timeout.dividedBy(4);
    }

    Duration timeout() {
        return timeout;
    }

    /**
     * @param what what the request does, for the message
     * @param request sends the request once; called again on each resend
     * @param <T> the reply type
     * @return the first reply
     * @throws EngineUnavailableException if no reply came within the timeout
     * @throws EtcdRefusedException if etcd answered with an error that a resend cannot mend
     */
    <T> T call(String what, Supplier<CompletableFuture<T>> request) {
        return call(what, request, quarter);
    }

    /**
     * Like {@link #call(String, Supplier)}, resending more often than every quarter of the timeout.
     *
     * @param resendAfter how long a request may go unanswered before it is sent again
     */
    <T> T call(String what, Supplier<CompletableFuture<T>> request, Duration resendAfter) {
        return call(what, request, resendAfter, reply -> true, inFlightPermits);
    }

    /**
     * Like {@link #call(String, Supplier)}, for a request that keeps what is held (a renewal's read):
     * it draws on the permits that asks never take.
     */
    <T> T callKeeping(String what, Supplier<CompletableFuture<T>> request) {
        return callKeeping(what, request, quarter);
    }

    /** Like {@link #callKeeping(String, Supplier)}, resending after {@code resendAfter} (a keep-alive). */
    <T> T callKeeping(String what, Supplier<CompletableFuture<T>> request, Duration resendAfter) {
        return call(what, request, resendAfter, reply -> true, freeingPermits);
    }

    /**
     * Like {@link #call(String, Supplier)}, for a request whose copies may answer differently: a
     * compare-and-delete sent again answers "not found" when its first copy was carried out. A reply
     * that is not {@code conclusive} is returned only once no other copy still out (within the
     * timeout) gives a conclusive one. These are deletes, which free what is held: they draw on the
     * permits that asks never take.
     */
    <T> T callPreferring(String what, Supplier<CompletableFuture<T>> request, Predicate<? super T> conclusive) {
        return call(what, request, quarter, conclusive, freeingPermits);
    }

    private <T> T call(
            String what,
            Supplier<CompletableFuture<T>> request,
            Duration resendAfter,
            Predicate<? super T> conclusive,
            Semaphore permits) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        long resendEvery = Math.max(1, Math.min(resendAfter.toNanos(), timeout.toNanos() / 4));
        List<CompletableFuture<T>> inFlight = new ArrayList<>();
        Throwable lastFailure = null;
        boolean interrupted = false;
        try {
            while (true) {
                interrupted |= send(request, inFlight, deadline, what, lastFailure, permits);
                long sentAt = System.nanoTime();
                while (true) {
                    long now = System.nanoTime();
                    if (now >= deadline) {
                        throw unavailable(what, lastFailure);
                    }
                    if (inFlight.isEmpty()) {
                        if (now - sentAt >= FAILURE_PAUSE_NANOS) {
                            break;
                        }
                        try {
                            sleep(Math.min(FAILURE_PAUSE_NANOS - (now - sentAt), deadline - now));
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                        continue;
                    }
                    long wait = Math.min(resendEvery - (now - sentAt), deadline - now);
                    if (wait <= 0) {
                        break;
                    }
                    try {
                        if (inFlight.size() == 1) {
                            return inFlight.get(0).get(wait, TimeUnit.NANOSECONDS);
                        }
                        @SuppressWarnings("unchecked")
                        T reply = (T) CompletableFuture.anyOf(inFlight.toArray(new CompletableFuture<?>[0]))
                                .get(wait, TimeUnit.NANOSECONDS);
                        return conclusive.test(reply) ? reply : preferConclusive(inFlight, reply, conclusive, deadline);
                    } catch (ExecutionException e) {
                        lastFailure = e.getCause();
                        if (!isTransient(lastFailure)) {
                            throw EtcdRefusedException.of(what, describe, lastFailure);
                        }
                        inFlight.removeIf(CompletableFuture::isCompletedExceptionally);
                    } catch (TimeoutException e) {
                        // no answer yet: resend or give up, checked above
                    } catch (InterruptedException e) {
                        // a request is short and bounded: finish it, so the store and this client agree
                        interrupted = true;
                    }
                }
            }
        } finally {
            inFlight.forEach(future -> future.cancel(true));
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Sends one copy once a permit is free (waiting for one until the deadline, through interrupts).
     *
     * @return whether the thread was interrupted while it waited
     */
    private <T> boolean send(
            Supplier<CompletableFuture<T>> request,
            List<CompletableFuture<T>> inFlight,
            long deadline,
            String what,
            Throwable lastFailure,
            Semaphore permits) {
        boolean interrupted = false;
        while (true) {
            try {
                if (!permits.tryAcquire(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    throw unavailable(
                            what,
                            lastFailure != null
                                    ? lastFailure
                                    : new IllegalStateException(
                                            permits.availablePermits() + " free permits: the requests of"
                                                    + " this client were out the whole time"));
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        CompletableFuture<T> sent;
        try {
            sent = request.get();
        } catch (RuntimeException e) {
            permits.release();
            throw e;
        }
        sent.whenComplete((reply, failure) -> permits.release());
        inFlight.add(sent);
        return interrupted;
    }

    /** @return the first conclusive reply of the copies still out, waiting until the deadline; else {@code first} */
    private static <T> T preferConclusive(
            List<CompletableFuture<T>> copies, T first, Predicate<? super T> conclusive, long deadline) {
        for (CompletableFuture<T> copy : copies) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                T reply = copy.get(left, TimeUnit.NANOSECONDS);
                if (conclusive.test(reply)) {
                    return reply;
                }
            } catch (ExecutionException | TimeoutException e) {
                // that copy has no better answer
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return first;
    }

    private static void sleep(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    private EngineUnavailableException unavailable(String what, Throwable cause) {
        String reason = cause == null ? "no answer" : "last failure: " + cause;
        return new EngineUnavailableException(
                "etcd " + describe + " did not " + what + " within " + timeout.toMillis() + " ms (" + reason
                        + "); check that a majority of its members is up and reachable",
                cause);
    }

    /** @return whether a resend may succeed where this failure did: the member or the cluster is unavailable */
    static boolean isTransient(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof io.etcd.jetcd.lease.NoSuchLeaseException
                    || String.valueOf(cause.getMessage()).contains("lease not found")) {
                return false;
            }
        }
        Status.Code code = Status.fromThrowable(failure).getCode();
        return switch (code) {
            case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN, ABORTED, RESOURCE_EXHAUSTED, INTERNAL -> true;
            default -> false;
        };
    }
}
