package io.cerberus.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a scheduled method on one instance per tick across the cluster
 * ({@link io.cerberus.Cerberus#runExclusively}): the lock {@link #name()} is tried once; held by
 * another instance, the call is skipped quietly (a DEBUG line and the metric
 * {@code cerberus.runs.skipped}, never an exception; the method returns null or, for a primitive,
 * its zero value); taken, the method runs with the lock renewed for as long as it runs, and the lock
 * is kept until {@link #atLeast()} after the run began.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @ExclusiveRun(name = "reminders", atLeast = "30s")
 * public void sendReminders() { ... }
 * }</pre>
 *
 * <p>The method must run on the calling thread: asynchronous return types are refused at start-up.
 * A lock lost while the method ran is thrown after it as {@link io.cerberus.LockLostException}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ExclusiveRun {

    /** @return the lock name shared by the instances, a constant (a job has one name) */
    String name();

    /**
     * @return how long after the run began the lock is kept at least, in Spring's duration forms
     *     ({@code 500ms}, {@code 30s}, {@code PT1M}); {@code 0} (the default) releases it when the run ends.
     *     Give about the schedule's period less the instances' clock differences.
     */
    String atLeast() default "0";
}
