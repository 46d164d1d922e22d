package io.cerberus;

/**
 * Root of the runtime exceptions Cerberus throws for its own failures (engine unreachable, a
 * capability the engine lacks, a wait that ran out). Misuse of a lock speaks the JDK's language
 * instead: {@link IllegalArgumentException} for bad input and {@link IllegalMonitorStateException}
 * (or its subclass {@link LockLostException}) for unlocking what is not held.
 */
public class CerberusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, where, and what to check next
     */
    public CerberusException(String message) {
        super(message);
    }

    /**
     * @param message what failed, where, and what to check next
     * @param cause the underlying failure
     */
    public CerberusException(String message, Throwable cause) {
        super(message, cause);
    }
}
