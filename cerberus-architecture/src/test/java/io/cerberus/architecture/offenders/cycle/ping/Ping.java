package io.cerberus.architecture.offenders.cycle.ping;

import io.cerberus.architecture.offenders.cycle.pong.Pong;

/** A test class that breaks the architecture on purpose: its package and {@link Pong}'s import each other. */
public final class Ping {
    private Ping() {}

    /** @return the other side of the cycle */
    public static Object offend() {
        return Pong.answer();
    }

    /** @return this side's name */
    public static String name() {
        return "ping";
    }
}
