package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.LockTimeoutException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Takes the lock of a {@link WithDistributedLock @WithDistributedLock} method around its call: evaluate
 * the key, {@code tryLock} with the wait (and the explicit lease, if any), run, unlock in
 * {@code finally}. Uses the thread-bound lock, so a locked method calling another with the same
 * key re-enters without a round trip. The annotation's durations are parsed once per method.
 *
 * <p>A method that returns its work ({@link Invocations.Shape}) holds a lease instead, taken with
 * {@code acquireAsync} (no thread waits) and released with {@code releaseAsync} when the work ends:
 * a {@code CompletableFuture} or {@code CompletionStage} method asks at its call and runs once the
 * lease is granted; a {@code Mono} or {@code Flux} method asks at each subscription
 * ({@link ReactiveCalls}). A busy lock fails the future or publisher with the blocking path's
 * {@link LockNotAcquiredException}. Leases are not thread-bound, so these holds do not re-enter.
 */
@Aspect
final class WithDistributedLockAspect implements Ordered {
    /** Outside {@code @Transactional} (lowest precedence): the lock outlives the commit. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private static final String ANNOTATION = "@WithDistributedLock";

    private final ObjectProvider<Cerberus> cerberus;
    private final KeyExpressions keys;
    private final Map<Method, Times> times = new ConcurrentHashMap<>();

    record Times(Duration waitTime, Duration leaseTime, Invocations.Shape shape) {}

    WithDistributedLockAspect(ObjectProvider<Cerberus> cerberus, KeyExpressions keys) {
        this.cerberus = cerberus;
        this.keys = keys;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Around(value = "@annotation(annotation)", argNames = "call,annotation")
    Object lockAround(ProceedingJoinPoint call, WithDistributedLock annotation) throws Throwable {
        Method method = Invocations.targetMethod(call);
        Times times = this.times.computeIfAbsent(method, m -> times(annotation, m));
        switch (times.shape()) {
            case FUTURE:
                return lockedFuture(call, annotation, method, times);
            case MONO:
            case FLUX:
                return ReactiveCalls.locked(
                        times.shape() == Invocations.Shape.FLUX,
                        () -> acquireAsync(call, annotation, method, times),
                        failure -> busy(failure, call, annotation, method, times),
                        call);
            default:
                return lockBlocking(call, annotation, method, times);
        }
    }

    @SuppressWarnings("try") // the fence scope is used by being open while the method runs
    private Object lockBlocking(ProceedingJoinPoint call, WithDistributedLock annotation, Method method, Times times)
            throws Throwable {
        String name = keys.evaluate(ANNOTATION, annotation.key(), method, call.getTarget(), call.getArgs())
                .toString();
        Cerberus client = cerberus.getObject();
        io.cerberus.DistributedLock lock = annotation.fair() ? client.fairLock(name) : client.lock(name);
        boolean acquired;
        try {
            acquired = times.leaseTime() == null
                    ? lock.tryLock(times.waitTime().toNanos(), TimeUnit.NANOSECONDS)
                    : lock.tryLock(times.waitTime().toNanos(), times.leaseTime().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(
                    name,
                    times.waitTime(),
                    "interrupted while waiting for lock '" + name + "' of " + ANNOTATION + " on "
                            + Invocations.describe(method) + "; the method did not run");
        }
        if (!acquired) {
            throw busy(name, method, times, client);
        }
        Throwable failure = null;
        try (FencedCalls.Scope fenced = FencedCalls.underIfFenced(lock.lease())) {
            return call.proceed();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // A lost lease (LockLostException) must be seen: another holder may have run meanwhile.
                if (failure == null) {
                    throw e;
                }
                failure.addSuppressed(e);
            }
        }
    }

    private static LockNotAcquiredException busy(String name, Method method, Times times, Cerberus client) {
        return new LockNotAcquiredException(
                name,
                times.waitTime(),
                "lock '" + name + "' is busy: " + ANNOTATION + " on "
                        + Invocations.describe(method) + " did not get it "
                        + (times.waitTime().isZero()
                                ? "at once (waitTime 0: one try)"
                                : "within its waitTime of " + Invocations.format(times.waitTime()))
                        + " on engine " + client.currentEngineUri() + "; the method did not run");
    }

    /** @return the lease's future, asked without blocking; cancelling it withdraws the attempt */
    private CompletableFuture<Lease> acquireAsync(
            ProceedingJoinPoint call, WithDistributedLock annotation, Method method, Times times) {
        io.cerberus.DistributedLock lock = lock(call, annotation, method);
        return times.leaseTime() == null
                ? lock.acquireAsync(times.waitTime())
                : lock.acquireAsync(times.waitTime(), times.leaseTime());
    }

    private io.cerberus.DistributedLock lock(ProceedingJoinPoint call, WithDistributedLock annotation, Method method) {
        String name = keys.evaluate(ANNOTATION, annotation.key(), method, call.getTarget(), call.getArgs())
                .toString();
        Cerberus client = cerberus.getObject();
        return annotation.fair() ? client.fairLock(name) : client.lock(name);
    }

    /** @return what a failed async acquire becomes: a busy lock as on the blocking path, anything else as it is */
    private Throwable busy(
            Throwable failure, ProceedingJoinPoint call, WithDistributedLock annotation, Method method, Times times) {
        Throwable cause =
                failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (!(cause instanceof LockTimeoutException) || cause instanceof LockNotAcquiredException) {
            return cause;
        }
        String name = keys.evaluate(ANNOTATION, annotation.key(), method, call.getTarget(), call.getArgs())
                .toString();
        LockNotAcquiredException busy = busy(name, method, times, cerberus.getObject());
        busy.initCause(cause);
        return busy;
    }

    /**
     * A CompletableFuture or CompletionStage method: ask at the call, run when granted, release when
     * its stage completes. Cancelling the returned future withdraws a waiting attempt, or cancels the
     * method's future (when it is a CompletableFuture), whose end releases the lease.
     */
    private CompletableFuture<Object> lockedFuture(
            ProceedingJoinPoint call, WithDistributedLock annotation, Method method, Times times) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Lease> pending;
        try {
            pending = acquireAsync(call, annotation, method, times);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        result.whenComplete((value, failure) -> {
            if (result.isCancelled()) {
                pending.cancel(false);
            }
        });
        pending.whenComplete((lease, failure) -> {
            if (failure != null) {
                result.completeExceptionally(busy(failure, call, annotation, method, times));
            } else if (result.isDone()) {
                lease.releaseAsync(); // cancelled as it was granted
            } else {
                runUnder(lease, call, result);
            }
        });
        return result;
    }

    private static void runUnder(Lease lease, ProceedingJoinPoint call, CompletableFuture<Object> result) {
        CompletionStage<?> running;
        try {
            running = (CompletionStage<?>) call.proceed();
            if (running == null) {
                running = CompletableFuture.completedFuture(null);
            }
        } catch (Throwable t) {
            running = CompletableFuture.failedFuture(t);
        }
        if (running instanceof CompletableFuture<?> future) {
            result.whenComplete((value, failure) -> {
                if (result.isCancelled()) {
                    future.cancel(false);
                }
            });
        }
        running.whenComplete((value, failure) -> lease.releaseAsync().whenComplete((released, releaseFailure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                if (releaseFailure != null) {
                    cause.addSuppressed(releaseFailure);
                }
                result.completeExceptionally(cause);
            } else if (releaseFailure != null) {
                // A lost lease must be seen: another holder may have run meanwhile.
                result.completeExceptionally(
                        releaseFailure instanceof CompletionException && releaseFailure.getCause() != null
                                ? releaseFailure.getCause()
                                : releaseFailure);
            } else {
                result.complete(value);
            }
        }));
    }

    /** @throws IllegalArgumentException or IllegalStateException if the annotation's values or the method do not fit */
    static Times times(WithDistributedLock annotation, Method method) {
        Invocations.Shape shape = Invocations.shape(ANNOTATION, method);
        Duration wait = Invocations.duration(ANNOTATION, "waitTime", annotation.waitTime(), method);
        Duration lease = Invocations.duration(ANNOTATION, "leaseTime", annotation.leaseTime(), method);
        if (lease != null && lease.isZero()) {
            throw new IllegalArgumentException(ANNOTATION + "(leaseTime = \"" + annotation.leaseTime() + "\") on "
                    + Invocations.describe(method) + " must be positive, or empty for the renewed default lease");
        }
        return new Times(wait == null ? Duration.ZERO : wait, lease, shape);
    }
}
