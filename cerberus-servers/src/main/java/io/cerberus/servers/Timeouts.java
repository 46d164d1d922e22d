package io.cerberus.servers;

import java.time.Duration;

/**
 * Time bounds scaled for slow machines by one system property: {@code -Dcerberus.test.timeScale=3}
 * makes every scaled bound three times longer. Child JVMs started by {@link ManagedProcess} get the
 * same factor. Nothing in this module scales a bound by itself: a caller that wants scaling passes
 * {@link #scaled(Duration)}.
 */
public final class Timeouts {
    /** The system property that scales every test time bound. */
    public static final String SCALE_PROPERTY = "cerberus.test.timeScale";

    private Timeouts() {}

    /**
     * @return the scale factor, 1 unless the property says otherwise
     * @throws IllegalArgumentException if the property is not a number of at least 1
     */
    public static double scale() {
        String value = System.getProperty(SCALE_PROPERTY, "1");
        try {
            double scale = Double.parseDouble(value.isBlank() ? "1" : value);
            if (scale < 1) {
                throw new IllegalArgumentException(SCALE_PROPERTY + " must be at least 1, was " + value);
            }
            return scale;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SCALE_PROPERTY + " must be a number, was '" + value + "'", e);
        }
    }

    /**
     * @param bound a time bound on a normal machine
     * @return the bound scaled for this machine
     */
    public static Duration scaled(Duration bound) {
        return Duration.ofNanos((long) (bound.toNanos() * scale()));
    }

    /**
     * @param name the bound's name, for the message
     * @param bound a time bound a caller gives
     * @return the bound
     * @throws IllegalArgumentException if it is zero or negative
     */
    public static Duration positive(String name, Duration bound) {
        if (bound.isNegative() || bound.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + bound);
        }
        return bound;
    }
}
