package io.cerberus.internal;

import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** Argument checks with uniform messages. Every failure is an {@link IllegalArgumentException}. */
public final class Checks {
    /** Longest lock name, in UTF-16 characters. */
    public static final int MAX_LOCK_NAME = 512;
    /** Longest lease a lock may be given. */
    public static final Duration MAX_LEASE = Duration.ofDays(365);

    private Checks() {}

    /**
     * @param name a lock name
     * @return the name
     */
    public static String lockName(String name) {
        return Arguments.name("lock name", name, MAX_LOCK_NAME);
    }

    /**
     * @param id a leadership participant's id
     * @return the id
     */
    public static String participantId(String id) {
        return Arguments.name("participant id", id, 200);
    }

    /**
     * @param uri an engine URI
     * @return its scheme, lower case
     */
    public static String uriScheme(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("engine URI must not be empty, e.g. \"mem:\" or \"file:/var/lock/app\"");
        }
        int colon = uri.indexOf(':');
        String scheme = colon > 0 ? uri.substring(0, colon) : "";
        if (!scheme.matches("[A-Za-z][A-Za-z0-9+.-]*")) {
            throw new IllegalArgumentException(
                    "engine URI must start with a scheme such as \"mem:\", \"file:\" or \"redis:\", was \""
                            + Redaction.redact(uri) + "\"");
        }
        return scheme.toLowerCase(Locale.ROOT);
    }

    /**
     * @param lease a lease time
     * @return the lease
     */
    public static Duration leaseTime(Duration lease) {
        Arguments.positive("lease time", lease);
        if (lease.compareTo(MAX_LEASE) > 0) {
            // Duration.toString, since Durations.format() would overflow on absurd leases
            throw new IllegalArgumentException("lease time must be at most 365 days, was " + lease);
        }
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException("lease time must be at least 1ms, was " + lease.toNanos() + "ns");
        }
        return lease;
    }

    /**
     * @param wait a wait time
     * @return the wait
     */
    public static Duration waitTime(Duration wait) {
        Arguments.notNull("wait time", wait);
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait time must not be negative, was " + Durations.format(wait));
        }
        return wait;
    }

    /**
     * @param what what the amount is ("wait time", "lease time")
     * @param amount the amount
     * @param unit its unit
     * @return the amount in nanoseconds, saturated at {@link Long#MAX_VALUE} (about 292 years)
     */
    public static long nanos(String what, long amount, TimeUnit unit) {
        Arguments.notNull("time unit", unit);
        if (amount < 0) {
            throw new IllegalArgumentException(what + " must not be negative, was " + amount + " "
                    + unit.name().toLowerCase(Locale.ROOT));
        }
        return unit.toNanos(amount);
    }

    /**
     * @param d a non-negative duration
     * @return its nanoseconds, saturated at {@link Long#MAX_VALUE}
     */
    public static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }
}
