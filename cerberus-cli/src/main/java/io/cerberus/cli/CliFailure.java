package io.cerberus.cli;

/** A failure of the command line itself whose message is complete as it is: printed without the exception's class name. */
final class CliFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CliFailure(String message) {
        super(message);
    }

    CliFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
