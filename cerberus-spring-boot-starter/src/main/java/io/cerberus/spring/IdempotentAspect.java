package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.Outcome;
import io.cerberus.idempotency.ResultCodec;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.util.ClassUtils;

/**
 * Runs an {@link Idempotent @Idempotent} method through the idempotency guard, in the two-call
 * form: begin (claim the key, or get the first result), run, complete with the result or fail. A
 * guard is taken from the client on every call (guards are cheap); its records stay on the
 * client's first engine across switches. Per method and bean class, the operation name, codec, retention,
 * options and transaction rules are worked out once.
 *
 * <p>A failure releases the key (a retry runs again), unless the method's Spring transaction
 * committed in spite of it ({@link TransactionRules}: by default, a checked exception under
 * {@code @Transactional}): then the effect is there, so the failure is stored and a retry gets
 * {@link io.cerberus.idempotency.ReplayedFailureException} instead of running it twice. When the
 * records are in the application's DataSource, a {@code @Transactional} method's result is written in
 * its transaction instead, and commits with its effects ({@link TransactionalResults}).
 *
 * <p>A method that returns its work runs through {@code executeAsync}, so no thread waits for the
 * store or for another attempt: a {@code CompletableFuture} or {@code CompletionStage} method at
 * its call, a {@code Mono} method at each subscription ({@link ReactiveCalls}). What is stored is
 * the future's value or the Mono's element (none for an empty Mono); a failure releases the key
 * (transaction rules do not apply). A {@code Flux} method is refused at start: a stream is not
 * stored and replayed.
 */
@Aspect
final class IdempotentAspect implements Ordered {
    /** Outside {@code @WithDistributedLock}: a duplicate is answered without taking the lock. */
    static final int ORDER = WithDistributedLockAspect.ORDER - 100;

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
    private final TransactionRules transactions;
    private final TransactionalResults transactionalResults;
    private final ResultJsons json;
    private final Map<Target, Plan> plans = new ConcurrentHashMap<>();

    /** A method as called on a bean class: an inherited method is one operation per bean class. */
    private record Target(Method method, Class<?> beanClass) {}

    private record Plan(
            String operation,
            Duration retention,
            ResultCodec<Object> codec,
            IdempotencyOptions options,
            Predicate<Throwable> committedOn,
            Invocations.Shape shape,
            TransactionalResults.Runner inTransaction) {}

    IdempotentAspect(
            ObjectProvider<Cerberus> cerberus,
            ObjectProvider<IdempotencyOptions> baseOptions,
            KeyExpressions keys,
            TransactionRules transactions,
            TransactionalResults transactionalResults,
            ResultJsons json) {
        this.cerberus = cerberus;
        this.transactionalResults = transactionalResults;
        this.json = json;
        this.baseOptions = baseOptions;
        this.keys = keys;
        this.transactions = transactions;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Around(value = "@annotation(annotation)", argNames = "call,annotation")
    Object runOnce(ProceedingJoinPoint call, Idempotent annotation) throws Throwable {
        Method method = Invocations.targetMethod(call);
        Class<?> beanClass =
                call.getTarget() == null ? method.getDeclaringClass() : AopUtils.getTargetClass(call.getTarget());
        Plan plan = plans.computeIfAbsent(new Target(method, beanClass), target -> plan(annotation, target));
        switch (plan.shape()) {
            case FUTURE:
                CompletableFuture<Outcome<Object>> outcome;
                try {
                    outcome = executeAsync(call, annotation, method, plan);
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
                CompletableFuture<Object> result = outcome.thenApply(Outcome::value);
                result.whenComplete((value, failure) -> {
                    if (result.isCancelled()) {
                        outcome.cancel(false);
                    }
                });
                return result;
            case MONO:
                return ReactiveCalls.once(() -> executeAsync(call, annotation, method, plan));
            default:
                return runOnceBlocking(call, annotation, method, plan);
        }
    }

    private Object runOnceBlocking(ProceedingJoinPoint call, Idempotent annotation, Method method, Plan plan)
            throws Throwable {
        IdempotencyKey key = key(call, annotation, method, plan);
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
            if (plan.inTransaction() != null) {
                return plan.inTransaction().run(attempt, call);
            }
            Object result;
            try {
                result = call.proceed();
            } catch (Throwable t) {
                // a failure its transaction committed all the same took effect: stored, so a retry does not run it
                // twice
                attempt.fail(t, plan.committedOn().test(t));
                throw t;
            }
            return attempt.complete(result).value();
        }
    }

    private IdempotencyKey key(ProceedingJoinPoint call, Idempotent annotation, Method method, Plan plan) {
        Object content = keys.evaluate(ANNOTATION, annotation.key(), method, call.getTarget(), call.getArgs());
        try {
            return IdempotencyKey.ofContent(plan.operation(), content);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    ANNOTATION + "(key = \"" + annotation.key() + "\") on " + Invocations.describe(method)
                            + ": its value cannot be a key: " + e.getMessage(),
                    e);
        }
    }

    /**
     * @return the future outcome of an async method: its value stored, or replayed without a call
     * @throws IllegalArgumentException if the key's value cannot be a key
     */
    private CompletableFuture<Outcome<Object>> executeAsync(
            ProceedingJoinPoint call, Idempotent annotation, Method method, Plan plan) {
        IdempotencyKey key = key(call, annotation, method, plan);
        return cerberus.getObject()
                .idempotency(plan.options())
                .executeAsync(key, plan.retention(), plan.codec(), () -> started(call, plan.shape()));
    }

    private static CompletionStage<Object> started(ProceedingJoinPoint call, Invocations.Shape shape) {
        try {
            Object returned = call.proceed();
            if (shape == Invocations.Shape.MONO) {
                return ReactiveCalls.started(returned);
            }
            @SuppressWarnings("unchecked")
            CompletionStage<Object> stage = (CompletionStage<Object>) returned;
            return stage == null ? CompletableFuture.completedFuture(null) : stage;
        } catch (Throwable failure) {
            return CompletableFuture.failedFuture(failure);
        }
    }

    private Plan plan(Idempotent annotation, Target target) {
        Checked checked = check(annotation, target.method(), json);
        String operation = annotation.operation().isEmpty()
                ? operation(target.method(), target.beanClass())
                : annotation.operation();
        Predicate<Throwable> committedOn = transactions.committedOn(target.method(), target.beanClass());
        IdempotencyOptions options = options(annotation, checked.waitTime());
        return new Plan(
                operation,
                checked.retention(),
                checked.codec(),
                options,
                committedOn == null ? failure -> false : committedOn,
                checked.shape(),
                checked.shape() == Invocations.Shape.PLAIN
                        ? transactionalResults.runnerFor(target.method(), target.beanClass())
                        : null);
    }

    /**
     * @return the default operation name: {@code <bean class>.<method>(<parameter types>)}, fully
     *     qualified, so overloads, classes of one simple name and an inherited method on two bean
     *     classes are apart; at most 256 characters (a longer one ends with its SHA-256 instead)
     */
    static String operation(Method method, Class<?> beanClass) {
        StringJoiner parameters = new StringJoiner(",", "(", ")");
        for (Class<?> type : method.getParameterTypes()) {
            parameters.add(type.getTypeName());
        }
        return OperationNames.fit(ClassUtils.getUserClass(beanClass).getName() + "." + method.getName() + parameters);
    }

    record Checked(Duration retention, Duration waitTime, ResultCodec<Object> codec, Invocations.Shape shape) {}

    /**
     * @param json makes the codec of the method's results
     * @return the annotation's values, checked
     * @throws IllegalArgumentException or IllegalStateException if they or the method do not fit
     */
    static Checked check(Idempotent annotation, Method method, ResultJsons json) {
        Invocations.Shape shape = Invocations.shape(ANNOTATION, method);
        if (shape == Invocations.Shape.FLUX) {
            throw new IllegalStateException(ANNOTATION + " on " + Invocations.describe(method) + " is not supported: it"
                    + " returns Flux, a stream, which is not stored and replayed; return Mono<List<..>> (collectList())"
                    + " to store the whole list, or annotate the method that makes one element");
        }
        Duration retention = Invocations.duration(ANNOTATION, "retention", annotation.retention(), method);
        if (retention == null || retention.isZero()) {
            throw new IllegalArgumentException(ANNOTATION + "(retention = \"" + annotation.retention() + "\") on "
                    + Invocations.describe(method) + " must be a positive duration");
        }
        Duration wait = Invocations.duration(ANNOTATION, "waitTime", annotation.waitTime(), method);
        if (wait != null && annotation.onInProgress() != Idempotent.InProgress.WAIT) {
            throw new IllegalArgumentException(ANNOTATION + "(waitTime = \"" + annotation.waitTime() + "\") on "
                    + Invocations.describe(method) + " needs onInProgress = WAIT; with " + annotation.onInProgress()
                    + " a duplicate does not wait");
        }
        String operation = annotation.operation();
        if (!operation.isEmpty() && (operation.isBlank() || operation.length() > OperationNames.MAX)) {
            throw new IllegalArgumentException(ANNOTATION + "(operation = \"" + operation + "\") on "
                    + Invocations.describe(method) + " must have 1 to " + OperationNames.MAX
                    + " characters, not only spaces (or be left out for the default name)");
        }
        Type returned = Invocations.resultType(method);
        if (returned == void.class || returned == Void.class) {
            return new Checked(retention, wait, NOTHING, shape);
        }
        if (!ResultJsons.available()) {
            throw new IllegalStateException(
                    ANNOTATION + " on " + Invocations.describe(method) + " stores its result as JSON, and there is"
                            + " no JSON codec on the class path: add the dependency io.cerberus:cerberus-jackson (it brings Jackson)");
        }
        return new Checked(retention, wait, json.codec(method), shape);
    }

    private IdempotencyOptions options(Idempotent annotation, Duration wait) {
        IdempotencyOptions base = baseOptions.getObject();
        switch (annotation.onInProgress()) {
            case WAIT:
                return base.waitingWhenInProgress(
                        wait != null
                                ? wait
                                : base.whenInProgress() == IdempotencyOptions.InProgress.WAIT
                                        ? base.waitAtMost()
                                        : DEFAULT_WAIT);
            case REJECT:
                return new IdempotencyOptions(
                        base.lease(),
                        IdempotencyOptions.InProgress.REJECT,
                        base.waitAtMost(),
                        base.whenStoreDown(),
                        base.storeAttempts(),
                        base.remember());
            default:
                return base;
        }
    }
}
