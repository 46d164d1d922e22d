package io.cerberus;

import java.time.Instant;

/**
 * A change of the engine a {@link Cerberus} client sends new acquisitions to.
 *
 * @param from the engine new acquisitions went to before
 * @param to the engine they go to now
 * @param reason why the client switched
 * @param number how many switches this client has made, this one included (1 for the first)
 * @param at when the switch happened
 */
public record EngineSwitchEvent(String from, String to, Reason reason, long number, Instant at) {

    /** Why a client switched engines. */
    public enum Reason {
        /** The application called {@link Cerberus#switchEngine()} or {@link Cerberus#switchEngine(String)}. */
        MANUAL,
        /** Automatic failover: the current engine failed its health checks for the configured time. */
        FAILOVER,
        /** Automatic fail-back: the primary engine passed its health checks for the configured time. */
        FAILBACK
    }

    @Override
    public String toString() {
        return "switch #" + number + " from engine '" + from + "' to '" + to + "' (" + reason + ") at " + at;
    }
}
