package io.cerberus.spi;

import java.util.Objects;

/**
 * A lock's identity: namespace and name, both already validated by the core (non-empty, bounded,
 * no control characters). Engines must treat both as opaque text: a name with {@code /},
 * {@code ..}, {@code *}, braces or non-ASCII is just a name.
 *
 * @param namespace the client's namespace
 * @param name the lock name
 */
public record LockKey(String namespace, String name) {
    /** Checks for {@code null}. */
    public LockKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
