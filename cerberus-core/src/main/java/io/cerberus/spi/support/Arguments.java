package io.cerberus.spi.support;

import java.time.Duration;
import java.util.Locale;

/**
 * Argument checks with uniform messages, for the core and for engines' option classes. Every
 * failure is an {@link IllegalArgumentException} naming what was wrong.
 */
public final class Arguments {
    private Arguments() {}

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
                throw new IllegalArgumentException(String.format(
                        Locale.ROOT,
                        "%s must not contain control characters, found U+%04X at index %d",
                        what,
                        (int) c,
                        i));
            }
            if (Character.isSurrogate(c)) {
                boolean paired = Character.isHighSurrogate(c)
                        && i + 1 < value.length()
                        && Character.isLowSurrogate(value.charAt(i + 1));
                if (!paired) {
                    throw new IllegalArgumentException(
                            what + " must be valid Unicode, found a lone surrogate at index " + i);
                }
                i++;
            }
        }
        return value;
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
            throw new IllegalArgumentException(what + " must be positive, was " + Durations.format(value));
        }
        return value;
    }
}
