package io.cerberus.check.judge;

/**
 * A judge's verdict, with the exit code {@code cerberus check} ends with. A run that showed nothing
 * (no hold, no effect) is {@link #NO_PROGRESS}, never safe.
 */
public enum Verdict {
    /** Nothing wrong was seen. */
    SAFE(0),
    /** Lock check: holders overlapped, and the fenced register refused every stale write. */
    SAFE_WITH_FENCING(0),
    /** Idempotency check: effects applied twice, each explained by a fault on the attempt. */
    DUPLICATES_EXPLAINED(0),
    /** The property was broken: lost updates, tokens backwards, unexplained duplicates. */
    UNSAFE(1),
    /** Nothing was shown: no client held a lock, no operation ran. */
    NO_PROGRESS(2),
    /** Lock check: a lock asked for at the end of the run was granted to nobody. */
    STUCK(3);

    private final int exitCode;

    Verdict(int exitCode) {
        this.exitCode = exitCode;
    }

    /** @return the exit code of {@code cerberus check} with this verdict */
    public int exitCode() {
        return exitCode;
    }
}
