package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.ResultCodec;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Runs an {@link Idempotent @Idempotent} method through the idempotency guard, in the two-call
 * form: begin (claim the key, or get the first result), run, complete with the result or fail
 * (which releases the key). A guard is taken from the client on every call (guards are cheap), so
 * records follow the client to a new engine after a switch. Per method, the codec, retention and
 * options are worked out once.
 */
@Aspect
final class IdempotentAspect implements Ordered {
    /** Outside {@code @DistributedLock}: a duplicate is answered without taking the lock. */
    static final int ORDER = DistributedLockAspect.ORDER - 100;
    private static final String ANNOTATION = "@Idempotent";
    private static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);

    /** The result of a void method: nothing to store, nothing to replay. */
    private static final ResultCodec<Object> NOTHING = new ResultCodec<>() {
        @Override
        public byte[] encode(Object value) {
            return new byte[0];
        }

        @Override
        public Object decode(byte[] bytes) {
            return null;
        }
    };

    private final ObjectProvider<Cerberus> cerberus;
    private final ObjectProvider<IdempotencyOptions> baseOptions;
    private final KeyExpressions keys;
    private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

    private record Plan(String operation, Duration retention, ResultCodec<Object> codec, IdempotencyOptions options) {
    }

    IdempotentAspect(ObjectProvider<Cerberus> cerberus, ObjectProvider<IdempotencyOptions> baseOptions, KeyExpressions keys) {
        this.cerberus = cerberus;
        this.baseOptions = baseOptions;
        this.keys = keys;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Around(value = "@annotation(annotation)", argNames = "call,annotation")
    Object runOnce(ProceedingJoinPoint call, Idempotent annotation) throws Throwable {
        Method method = Invocations.targetMethod(call);
        Plan plan = plans.computeIfAbsent(method, m -> plan(annotation, m));
        Object content = keys.evaluate(ANNOTATION, annotation.key(), method, call.getTarget(), call.getArgs());
        IdempotencyKey key;
        try {
            key = IdempotencyKey.ofContent(plan.operation(), content);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ANNOTATION + "(key = \"" + annotation.key() + "\") on " + Invocations.describe(method)
                    + ": its value cannot be a key: " + e.getMessage(), e);
        }
        IdempotencyGuard guard = cerberus.getObject().idempotency(plan.options());
        IdempotencyAttempt<Object> attempt;
        try {
            attempt = guard.begin(key, plan.retention(), plan.codec());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OperationInProgressException("interrupted while waiting for another attempt of " + key + " ("
                    + Invocations.describe(method) + "); the method did not run");
        }
        try (attempt) {
            if (!attempt.mustRun()) {
                return attempt.replayed();
            }
            Object result;
            try {
                result = call.proceed();
            } catch (Throwable t) {
                attempt.fail(t);
                throw t;
            }
            return attempt.complete(result).value();
        }
    }

    private Plan plan(Idempotent annotation, Method method) {
        Checked checked = check(annotation, method);
        String operation = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        return new Plan(operation, checked.retention(), checked.codec(), options(annotation, checked.waitTime()));
    }

    record Checked(Duration retention, Duration waitTime, ResultCodec<Object> codec) {
    }

    /**
     * @return the annotation's values, checked
     * @throws IllegalArgumentException or IllegalStateException if they or the method do not fit
     */
    static Checked check(Idempotent annotation, Method method) {
        Invocations.refuseAsynchronous(ANNOTATION, method);
        Duration retention = Invocations.duration(ANNOTATION, "retention", annotation.retention(), method);
        if (retention == null || retention.isZero()) {
            throw new IllegalArgumentException(ANNOTATION + "(retention = \"" + annotation.retention() + "\") on "
                    + Invocations.describe(method) + " must be a positive duration");
        }
        Duration wait = Invocations.duration(ANNOTATION, "waitTime", annotation.waitTime(), method);
        if (wait != null && annotation.onInProgress() != Idempotent.InProgress.WAIT) {
            throw new IllegalArgumentException(ANNOTATION + "(waitTime = \"" + annotation.waitTime() + "\") on " + Invocations.describe(method)
                    + " needs onInProgress = WAIT; with " + annotation.onInProgress() + " a duplicate does not wait");
        }
        Class<?> returned = method.getReturnType();
        ResultCodec<Object> codec = returned == void.class || returned == Void.class ? NOTHING : ResultCodec.jsonOf(method.getGenericReturnType());
        return new Checked(retention, wait, codec);
    }

    private IdempotencyOptions options(Idempotent annotation, Duration wait) {
        IdempotencyOptions base = baseOptions.getObject();
        switch (annotation.onInProgress()) {
            case WAIT:
                return base.waitingWhenInProgress(wait != null ? wait
                        : base.whenInProgress() == IdempotencyOptions.InProgress.WAIT ? base.waitAtMost() : DEFAULT_WAIT);
            case REJECT:
                return new IdempotencyOptions(base.lease(), IdempotencyOptions.InProgress.REJECT, base.waitAtMost(), base.whenStoreDown(),
                        base.storeAttempts(), base.remember());
            default:
                return base;
        }
    }
}
