package io.cerberus;

/**
 * A lock this client believed it held was lost before it was released: its lease expired (the
 * holder was paused or cut off longer than the lease), a renewal was refused, or the engine
 * session ended. Whatever the lock protected may have been touched by the next holder; the
 * fencing token lets the protected resource refuse the stale writer.
 *
 * <p>It extends {@link IllegalMonitorStateException} because the caller no longer holds the lock
 * it tries to release, as the JDK's lock contract would say.
 */
public class LockLostException extends IllegalMonitorStateException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock, why it was lost, and which engine
     */
    public LockLostException(String message) {
        super(message);
    }

    /**
     * @param message which lock, why it was lost, and which engine
     * @param cause the failure that made the lease uncertain, may be {@code null}
     */
    public LockLostException(String message, Throwable cause) {
        super(message);
        if (cause != null) {
            initCause(cause);
        }
    }
}
