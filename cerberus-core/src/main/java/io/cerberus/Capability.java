package io.cerberus;

/**
 * What an engine can do beyond plain exclusive locks. Asking an engine for a capability it does
 * not declare fails at once with {@link UnsupportedCapabilityException}.
 */
public enum Capability {
    /** Every acquisition gets a number larger than every earlier acquisition of the same name. */
    FENCING("fencing tokens"),
    /** Waiters are served first come, first served ({@link Cerberus#fairLock(String)}). */
    FAIR("fair locks"),
    /** Shared readers and one exclusive writer ({@link Cerberus#readWriteLock(String)}). */
    READ_WRITE("read-write locks"),
    /**
     * Holds live with the client's session or process and are freed by the engine at once when it
     * dies; no per-lock lease renewal is needed.
     */
    SESSION_BOUND("holds bound to the client's session"),
    /** Locks can be held by clients in different processes (every engine but {@code mem:}). */
    MULTI_PROCESS("locks shared between processes"),
    /** Held locks can be listed ({@link Cerberus#inspect(String)}). */
    INSPECT("listing held locks");

    private final String description;

    Capability(String description) {
        this.description = description;
    }

    /** @return what the capability gives, in a few words, for error messages */
    public String description() {
        return description;
    }
}
