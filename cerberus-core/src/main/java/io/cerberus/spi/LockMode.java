package io.cerberus.spi;

/**
 * How a lock is held. {@link #EXCLUSIVE}, {@link #FAIR} and {@link #WRITE} exclude each other and
 * every reader of the same name: they are one lock and differ only in waiting order.
 */
public enum LockMode {
    /** One holder; waiters may be served in any order. */
    EXCLUSIVE,
    /** One holder; waiters are served first come, first served. */
    FAIR,
    /** Shared with other readers; excludes writers. */
    READ,
    /** The writer of a read-write lock: exclusive. */
    WRITE;

    private final String label = name().toLowerCase(java.util.Locale.ROOT);

    /** @return whether holds of this mode may be shared */
    public boolean isShared() {
        return this == READ;
    }

    /** @return the mode's name as shown to people: {@code exclusive}, {@code fair}, ... */
    public String label() {
        return label;
    }
}
