package io.cerberus.testkit;

import java.time.Duration;

/**
 * Test time bounds, scaled for slow machines by one system property:
 * {@code -Dcerberus.test.timeScale=3} makes every bound three times longer.
 */
public final class TestTimes {
    /** The system property that scales every test time bound. */
    public static final String SCALE_PROPERTY = "cerberus.test.timeScale";

    private TestTimes() {
    }

    /** @return the scale factor, 1 unless the property says otherwise */
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
     * @param millis a time bound in milliseconds on a normal machine
     * @return the bound scaled for this machine
     */
    public static Duration millis(long millis) {
        return scaled(Duration.ofMillis(millis));
    }
}
