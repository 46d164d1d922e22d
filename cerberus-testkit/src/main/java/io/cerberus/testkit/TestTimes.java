package io.cerberus.testkit;

import io.cerberus.servers.Timeouts;
import java.time.Duration;

/**
 * Test time bounds, scaled for slow machines by one system property:
 * {@code -Dcerberus.test.timeScale=3} makes every bound three times longer. The property and the
 * factor are {@link Timeouts}'s, which the child JVMs of the tests are started with too.
 */
public final class TestTimes {
    /** The system property that scales every test time bound. */
    public static final String SCALE_PROPERTY = Timeouts.SCALE_PROPERTY;

    private TestTimes() {}

    /** @return the scale factor, 1 unless the property says otherwise */
    public static double scale() {
        return Timeouts.scale();
    }

    /**
     * @param bound a time bound on a normal machine
     * @return the bound scaled for this machine
     */
    public static Duration scaled(Duration bound) {
        return Timeouts.scaled(bound);
    }

    /**
     * @param millis a time bound in milliseconds on a normal machine
     * @return the bound scaled for this machine
     */
    public static Duration millis(long millis) {
        return scaled(Duration.ofMillis(millis));
    }
}
