package io.cerberus.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method while holding a distributed lock named by a SpEL expression over its
 * parameters: the lock is taken before the call (waiting at most {@link #waitTime()}) and
 * released after it, whether it returns or throws. The hold belongs to the calling thread and is
 * reentrant, like {@link io.cerberus.DistributedLock#lock()}.
 *
 * <pre>{@code
 * @WithDistributedLock(key = "'order:' + #orderId", waitTime = "5s")
 * public Receipt ship(long orderId) { ... }
 * }</pre>
 *
 * <p>When the lock stays busy past the wait, the method does not run and
 * {@link LockNotAcquiredException} is thrown (a web application answers HTTP 409). The method must
 * run on the calling thread: methods returning a {@code CompletionStage}, {@code Future} or a
 * reactive type are refused, as the lock would be released before their work is done. Runs
 * outside {@code @Transactional} (its order is higher), so the lock is held until the transaction
 * has committed.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface WithDistributedLock {

    /**
     * @return the lock name, a SpEL expression over the method's parameters ({@code #orderId},
     *     or {@code #p0} without {@code -parameters}) and beans ({@code @tenant.id()}); a constant
     *     name is quoted: {@code "'nightly-report'"}
     */
    String key();

    /**
     * @return how long to wait for a busy lock, in Spring's duration forms ({@code 500ms},
     *     {@code 5s}, {@code PT1M}; a bare number is milliseconds); {@code 0} (the default) tries once
     */
    String waitTime() default "0";

    /**
     * @return an explicit lease: the engine frees the lock this long after it was granted even if
     *     the method still runs, and it is not renewed; empty (the default) means the client's
     *     default lease, renewed while the method runs
     */
    String leaseTime() default "";

    /**
     * @return whether waiters are served first come, first served (only on engines with fair
     *     locks; others refuse with {@link io.cerberus.UnsupportedCapabilityException})
     */
    boolean fair() default false;
}
