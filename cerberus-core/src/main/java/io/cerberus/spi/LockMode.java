package io.cerberus.spi;

import io.cerberus.Capability;
import java.util.Optional;

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

    /**
     * @return the capability an engine needs to hold locks of this mode: {@link Capability#FAIR} for {@link #FAIR},
     *     {@link Capability#READ_WRITE} for {@link #READ} and {@link #WRITE}; empty for {@link #EXCLUSIVE}, which every
     *     engine has
     */
    public Optional<Capability> capability() {
        return switch (this) {
            case EXCLUSIVE -> Optional.empty();
            case FAIR -> Optional.of(Capability.FAIR);
            case READ, WRITE -> Optional.of(Capability.READ_WRITE);
        };
    }

    /** @return the mode's name as shown to people: {@code exclusive}, {@code fair}, ... */
    public String label() {
        return label;
    }
}
