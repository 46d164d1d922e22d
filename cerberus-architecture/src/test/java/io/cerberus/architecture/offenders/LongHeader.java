package io.cerberus.architecture.offenders;

/**
 * A test class that breaks the architecture on purpose: its header is one line over a screen.
 * Filler line 1.
 * Filler line 2.
 * Filler line 3.
 * Filler line 4.
 * Filler line 5.
 * Filler line 6.
 * Filler line 7.
 * Filler line 8.
 * Filler line 9.
 * Filler line 10.
 * Filler line 11.
 * Filler line 12.
 * Filler line 13.
 * Filler line 14.
 * Filler line 15.
 * Filler line 16.
 * Filler line 17.
 * Filler line 18.
 * Filler line 19.
 * Filler line 20.
 * Filler line 21.
 * Filler line 22.
 * Filler line 23.
 */
public final class LongHeader {
    private LongHeader() {}
}
