package io.cerberus.spi.support;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as engine URIs and settings write them, and as messages show them. One grammar for
 * every engine: a whole number and a unit, {@code 500us}, {@code 250ms}, {@code 2s}, {@code 1m},
 * {@code 1h}; no fractions, no spaces, no bare numbers (is {@code 10} seconds or milliseconds?).
 */
public final class Durations {
    /** The units the grammar takes, for messages. */
    public static final String FORMS = "a whole number with a unit (ns, us, ms, s, m or h), such as 250ms, 2s or 1m";

    private static final Pattern AMOUNT_AND_UNIT = Pattern.compile("(\\d{1,15})(ns|us|ms|s|m|h)");
    private static final Duration LONGEST = Duration.ofDays(365);

    private Durations() {}

    /**
     * @param what the setting, for the message ({@code "timeout of redis URI redis://h"})
     * @param text the text written
     * @return the duration, positive and at most 365 days
     * @throws IllegalArgumentException naming {@code what} and the grammar, for anything else
     */
    public static Duration parsePositive(String what, String text) {
        Matcher m = AMOUNT_AND_UNIT.matcher(text == null ? "" : text);
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            Duration d = switch (m.group(2)) {
                case "ns" -> Duration.ofNanos(amount);
                case "us" -> Duration.ofNanos(amount).multipliedBy(1000);
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
            if (!d.isZero() && d.compareTo(LONGEST) <= 0) {
                return d;
            }
        }
        throw new IllegalArgumentException(
                what + " must be a positive duration up to 365 days, " + FORMS + ", was '" + text + "'");
    }

    /**
     * @param d a duration
     * @return the duration for people: {@code 250ms}, {@code 12.5s}, {@code 30s}, {@code 2m30s}
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (Math.abs(ms) < 10_000) {
            return ms + "ms";
        }
        if (Math.abs(ms) < 120_000) {
            return ms % 1000 == 0 ? ms / 1000 + "s" : String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = d.getSeconds();
        return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
}
