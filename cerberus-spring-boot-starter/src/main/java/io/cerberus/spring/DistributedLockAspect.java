package io.cerberus.spring;

import io.cerberus.Cerberus;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Takes the lock of a {@link DistributedLock @DistributedLock} method around its call: evaluate
 * the key, {@code tryLock} with the wait (and the explicit lease, if any), run, unlock in
 * {@code finally}. Uses the thread-bound lock, so a locked method calling another with the same
 * key re-enters without a round trip. The annotation's durations are parsed once per method.
 */
@Aspect
final class DistributedLockAspect implements Ordered {
    /** Outside {@code @Transactional} (lowest precedence): the lock outlives the commit. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private static final String ANNOTATION = "@DistributedLock";

    private final ObjectProvider<Cerberus> cerberus;
    private final KeyExpressions keys;
    private final Map<Method, Times> times = new ConcurrentHashMap<>();

    record Times(Duration waitTime, Duration leaseTime) {}

    DistributedLockAspect(ObjectProvider<Cerberus> cerberus, KeyExpressions keys) {
        this.cerberus = cerberus;
        this.keys = keys;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Around(value = "@annotation(annotation)", argNames = "call,annotation")
    Object lockAround(ProceedingJoinPoint call, DistributedLock annotation) throws Throwable {
        Method method = Invocations.targetMethod(call);
        Times times = this.times.computeIfAbsent(method, m -> times(annotation, m));
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
            throw new LockNotAcquiredException(
                    name,
                    times.waitTime(),
                    "lock '" + name + "' is busy: " + ANNOTATION + " on "
                            + Invocations.describe(method) + " did not get it "
                            + (times.waitTime().isZero()
                                    ? "at once (waitTime 0: one try)"
                                    : "within its waitTime of " + Invocations.format(times.waitTime()))
                            + " on engine " + client.currentEngineUri() + "; the method did not run");
        }
        Throwable failure = null;
        try {
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

    /** @throws IllegalArgumentException or IllegalStateException if the annotation's values or the method do not fit */
    static Times times(DistributedLock annotation, Method method) {
        Invocations.refuseAsynchronous(ANNOTATION, method);
        Duration wait = Invocations.duration(ANNOTATION, "waitTime", annotation.waitTime(), method);
        Duration lease = Invocations.duration(ANNOTATION, "leaseTime", annotation.leaseTime(), method);
        if (lease != null && lease.isZero()) {
            throw new IllegalArgumentException(ANNOTATION + "(leaseTime = \"" + annotation.leaseTime() + "\") on "
                    + Invocations.describe(method) + " must be positive, or empty for the renewed default lease");
        }
        return new Times(wait == null ? Duration.ZERO : wait, lease);
    }
}
