package io.cerberus.architecture.offenders.cycle.pong;

import io.cerberus.architecture.offenders.cycle.ping.Ping;

/** A test class that breaks the architecture on purpose: its package and {@link Ping}'s import each other. */
public final class Pong {
    private Pong() {}

    /** @return the other side's name */
    public static String answer() {
        return Ping.name();
    }
}
