package io.cerberus.cli;

/**
 * The exit codes of {@code cerberus}, from {@code sysexits.h} where one fits, so scripts and cron
 * wrappers can tell "someone else is running" from "the engine is down" from "you typed it wrong".
 * {@code cerberus exec} otherwise exits with the code of the command it ran.
 */
final class ExitCodes {
    /** Success. */
    static final int OK = 0;
    /** EX_USAGE: bad option or argument, bad engine URI, an engine that cannot do what was asked. */
    static final int USAGE = 64;
    /** EX_UNAVAILABLE: the lock engine could not be reached. */
    static final int ENGINE_UNAVAILABLE = 69;
    /**
     * EX_CONFIG: the engine's server is set up in a way that breaks a guarantee (a Redis that may
     * evict lock keys, session locks through a transaction-pooling PgBouncer): refused, not used.
     */
    static final int UNSAFE_ENGINE = 78;
    /** EX_SOFTWARE: anything else that went wrong inside cerberus. */
    static final int INTERNAL_ERROR = 70;
    /** EX_TEMPFAIL: {@code exec} found the lock held by someone else; try again later. */
    static final int LOCK_BUSY = 75;
    /** {@code exec} lost its lock while the command ran (outside sysexits.h, so it means nothing else). */
    static final int LOCK_LOST = 79;
    /** {@code unlock} freed nothing: the lock is not held, or no hold has the token now. */
    static final int NOT_FREED = 1;
    /** As in POSIX shells: the command was found but cannot be executed. */
    static final int CANNOT_EXECUTE = 126;
    /** As in POSIX shells: the command was not found, or could not be started. */
    static final int COMMAND_NOT_FOUND = 127;
    /** A process that ended on signal N exits with this plus N, as in POSIX shells. */
    static final int SIGNAL_BASE = 128;

    /** The exit-code list shared by the help of every command. */
    static final String USAGE_LINE = "64:usage error: bad option or argument, bad engine URI or lock name,"
            + " an engine that cannot do what was asked";

    static final String UNAVAILABLE_LINE = "69:the lock engine could not be reached";
    static final String UNSAFE_LINE =
            "78:the engine's server is set up against a guarantee (the message says which setting and the way out)";
    static final String INTERNAL_LINE = "70:any other failure inside cerberus (--verbose shows the stack trace)";

    private ExitCodes() {}
}
