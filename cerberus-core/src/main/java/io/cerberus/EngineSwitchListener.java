package io.cerberus;

/**
 * Told of every engine switch of a client, e.g. to pass it on to the application's other hosts
 * (a configuration service, a message) so they switch too. Called on the thread that switched
 * (the caller of {@link Cerberus#switchEngine()}, or the client's health-check thread), after the
 * switch took effect; it should return quickly. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface EngineSwitchListener {

    /**
     * @param event the switch that happened
     */
    void switched(EngineSwitchEvent event);
}
