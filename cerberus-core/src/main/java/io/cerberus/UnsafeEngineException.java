package io.cerberus;

/**
 * The engine's server is set up in a way that breaks a guarantee Cerberus gives: a Redis server
 * whose eviction policy may delete lock keys before their lease ends, say. Thrown when the engine
 * is opened (the client is not built) and by {@link Cerberus#checkEngine} when the setting changed
 * after start-up. The message names the setting, why it breaks the guarantee, and the ways out:
 * change the server's setting, or accept the risk with the engine's opt-in parameter.
 */
public class UnsafeEngineException extends CerberusException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which setting, on which engine (URI without password), why, and what to do
     */
    public UnsafeEngineException(String message) {
        super(message);
    }
}
