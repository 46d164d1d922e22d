package io.cerberus.check.console;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Durations as people type them on a command line: the engines' grammar (a whole number and a
 * unit, {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}; see
 * {@link io.cerberus.spi.support.Durations}) or a bare {@code 0}. No fractions, no spaces, no
 * unit-less numbers other than zero, nothing longer than 365 days.
 */
public final class Durations implements ITypeConverter<Duration> {
    public static final String FORMS = "a whole number with a unit: 500ms, 10s, 2m, 1h (at most 365 days), or 0";

    /** For picocli. */
    public Durations() {}

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * @param text the text typed
     * @return the duration
     * @throws TypeConversionException naming the accepted forms, if the text is not one of them
     */
    public static Duration parse(String text) {
        if (text.matches("0{1,12}(ns|us|ms|s|m|h)?")) {
            return Duration.ZERO;
        }
        try {
            return io.cerberus.spi.support.Durations.parsePositive("'" + text + "'", text);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("'" + text + "' is not a duration; use " + FORMS);
        }
    }

    /**
     * @param d a non-negative duration
     * @return it for people: {@code 250ms}, {@code 3.5s}, {@code 4m10s}, {@code 2h5m}
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = d.getSeconds();
        if (s < 3_600) {
            return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
        }
        long minutes = s / 60;
        return minutes / 60 + "h" + (minutes % 60 == 0 ? "" : minutes % 60 + "m");
    }
}
