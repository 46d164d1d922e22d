package io.cerberus.servers;

/**
 * A server or child process of this module could not be found, started, reached or stopped. The
 * message names what failed and, where there is one, how to fix it (the Debian package to install,
 * the output the process left). Tests fail on it as they fail on an assertion; the bench and
 * {@code cerberus check} show its message.
 */
public class ServerException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed, and how to fix it */
    public ServerException(String message) {
        super(message);
    }

    /**
     * @param message what failed, and how to fix it
     * @param cause the underlying failure
     */
    public ServerException(String message, Throwable cause) {
        super(message, cause);
    }
}
