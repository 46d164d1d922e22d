package io.cerberus.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method once per key: the first call runs it and stores its result (as JSON, for the
 * method's generic return type); a later call with the same key gets that result back without
 * running it. The key is a SpEL expression over the parameters, turned into
 * {@code IdempotencyKey.ofContent("<class simple name>.<method name>", value)}, so two methods
 * never share keys. A call that throws releases the key: a retry runs again.
 *
 * <pre>{@code
 * @Idempotent(key = "#request.id", retention = "1d")
 * public Receipt charge(ChargeRequest request) { ... }
 * }</pre>
 *
 * <p>Methods returning {@code void} store nothing and are simply not run again. The result must be
 * something Jackson can write and read back. Methods returning a {@code CompletionStage},
 * {@code Future} or a reactive type are refused. Runs outside {@link DistributedLock} and
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
