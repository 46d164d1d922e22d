package io.cerberus.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Durations as people type them on a command line: a whole number and a unit, {@code 500ms},
 * {@code 10s}, {@code 2m}, {@code 1h}, or a bare {@code 0}. Parsed strictly: no fractions, no
 * spaces, no unit-less numbers other than zero, nothing longer than 365 days.
 */
final class Durations implements ITypeConverter<Duration> {
    private static final Pattern AMOUNT_AND_UNIT = Pattern.compile("(\\d{1,12})(ms|s|m|h)");
    private static final Duration LONGEST = Duration.ofDays(365);
    static final String FORMS = "a whole number with a unit: 500ms, 10s, 2m, 1h, or 0";

    /** For picocli. */
    Durations() {
    }

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * @param text the text typed
     * @return the duration
     * @throws TypeConversionException naming the accepted forms, if the text is not one of them
     */
    static Duration parse(String text) {
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = AMOUNT_AND_UNIT.matcher(text);
        if (!m.matches()) {
            throw new TypeConversionException("'" + text + "' is not a duration; use " + FORMS);
        }
        long amount = Long.parseLong(m.group(1));
        Duration d = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            default -> Duration.ofHours(amount);
        };
        if (d.compareTo(LONGEST) > 0) {
            throw new TypeConversionException("'" + text + "' is too long; the longest duration is 365 days (8760h)");
        }
        return d;
    }

    /**
     * @param d a non-negative duration
     * @return it for people: {@code 250ms}, {@code 3.5s}, {@code 4m10s}, {@code 2h5m}
     */
    static String format(Duration d) {
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
