package io.cerberus.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method once per key: the first call runs it and stores its result (as JSON, with the
 * class it had: a subclass, the implementation behind an interface or {@code Object},
 * {@code ResponseEntity} and {@code Optional} come back as they were); a later call with the same
 * key gets that result back without running it. The key is a SpEL expression over the parameters,
 * turned into {@code IdempotencyKey.ofContent(operation, value)}; the operation is
 * {@link #operation()}, by default the bean class and method signature, so two methods never share
 * keys. A call that throws releases the key, so a retry runs again, unless the method's
 * {@code @Transactional} commits on that exception (by default, a checked one): then the failure is
 * stored and a retry gets {@link io.cerberus.idempotency.ReplayedFailureException}.
 *
 * <pre>{@code
 * @Idempotent(key = "#request.id", retention = "1d", operation = "charge")
 * public Receipt charge(ChargeRequest request) { ... }
 * }</pre>
 *
 * <p>Methods returning {@code void} store nothing and are simply not run again. The result must be
 * something Jackson can write and read back. Methods returning a {@code CompletionStage},
 * {@code Future} or a reactive type are refused. Runs outside {@link WithDistributedLock} and
 * {@code @Transactional}, so a duplicate is answered before either is entered.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

    /**
     * @return the key, a SpEL expression over the method's parameters; its value may be a string,
     *     a number, a record, a map... (see {@link io.cerberus.idempotency.IdempotencyKey})
     */
    String key();

    /**
     * @return how long duplicates get the stored result, in Spring's duration forms ({@code 1d},
     *     {@code 12h}, {@code PT30M}; a bare number is milliseconds); default one day
     */
    String retention() default "1d";

    /**
     * @return the operation name the key is made in, 1 to 256 characters; empty (the default) means
     *     {@code <bean class>.<method>(<parameter types>)}, fully qualified (for example
     *     {@code com.shop.Payments.charge(com.shop.ChargeRequest)}). The default changes when the
     *     class, the method or its parameters are renamed or moved, and with it every key, so that
     *     duplicates of calls made before run again: name the operation to keep keys across such
     *     changes. Two methods given one name share their keys.
     */
    String operation() default "";

    /** @return what a duplicate does while the first call still runs */
    InProgress onInProgress() default InProgress.CONFIGURED;

    /**
     * @return with {@link InProgress#WAIT}, how long a duplicate waits for the first call;
     *     empty (the default) means {@code cerberus.idempotency.wait-when-in-progress}, else 30s
     */
    String waitTime() default "";

    /** What a duplicate does while the first call still runs. */
    enum InProgress {
        /** As {@code cerberus.idempotency.wait-when-in-progress} says: wait that long when set, else reject. */
        CONFIGURED,
        /** Throw {@link io.cerberus.idempotency.OperationInProgressException} at once. */
        REJECT,
        /** Wait up to {@link Idempotent#waitTime()} for the first call: replay its result, or run if it failed. */
        WAIT
    }
}
