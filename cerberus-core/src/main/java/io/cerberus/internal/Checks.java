package io.cerberus.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** Argument checks with uniform messages. Every failure is an {@link IllegalArgumentException}. */
public final class Checks {
    /** Longest lock name, in UTF-16 characters. */
    public static final int MAX_LOCK_NAME = 512;
    /** Longest lease a lock may be given. */
    public static final Duration MAX_LEASE = Duration.ofDays(365);

    private Checks() {
    }

    /**
     * @param what what the value is, for the message ("lock name")
     * @param value the value
     * @param maxLength the longest allowed, in characters
     * @return the value
     */
    public static String name(String what, String value, int maxLength) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(
                    what + " must be at most " + maxLength + " characters, was " + value.length());
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "%s must not contain control characters, found U+%04X at index %d", what, (int) c, i));
            }
            if (Character.isSurrogate(c)) {
                boolean paired = Character.isHighSurrogate(c)
                        && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1));
                if (!paired) {
                    throw new IllegalArgumentException(what + " must be valid Unicode, found a lone surrogate at index " + i);
                }
                i++;
            }
        }
        return value;
    }

    /**
     * @param name a lock name
     * @return the name
     */
    public static String lockName(String name) {
        return name("lock name", name, MAX_LOCK_NAME);
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
            throw new IllegalArgumentException("engine URI must start with a scheme such as \"mem:\", \"file:\" or \"redis:\", was \""
                    + Uris.redact(uri) + "\"");
        }
        return scheme.toLowerCase(Locale.ROOT);
    }

    /**
     * @param what what the value is
     * @param value the value
     * @param <T> its type
     * @return the value
     */
    public static <T> T notNull(String what, T value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        return value;
    }

    /**
     * @param what what the duration is
     * @param value the duration
     * @return the value
     */
    public static Duration positive(String what, Duration value) {
        notNull(what, value);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + format(value));
        }
        return value;
    }

    /**
     * @param lease a lease time
     * @return the lease
     */
    public static Duration leaseTime(Duration lease) {
        positive("lease time", lease);
        if (lease.compareTo(MAX_LEASE) > 0) {
            // Duration.toString, since format() would overflow on absurd leases
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
        notNull("wait time", wait);
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait time must not be negative, was " + format(wait));
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
        notNull("time unit", unit);
        if (amount < 0) {
            throw new IllegalArgumentException(what + " must not be negative, was " + amount + " " + unit.name().toLowerCase(Locale.ROOT));
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

    /**
     * @param d a duration
     * @return the duration for people: {@code 250ms}, {@code 3.5s}, {@code 2m30s}
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (Math.abs(ms) < 10_000) {
            return ms + "ms";
        }
        if (Math.abs(ms) < 120_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = d.getSeconds();
        return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
}
