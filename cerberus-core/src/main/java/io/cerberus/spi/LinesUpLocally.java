package io.cerberus.spi;

/**
 * An optional ability of a {@link LockEngine}: the core lines up this client's waiters for an
 * exclusive lock, so that only the first of them asks the engine and a release in this client wakes
 * the next one at once. An engine says so when exclusive waiters race in the store (each asks
 * again when told of a release): then a thread that releases and asks again cannot win against
 * the waiters of its own client, and a hand-off between them costs one acquire. An engine that
 * queues waiters in the store (in turn order) does not. {@code tryLock()} without a wait still asks
 * at once.
 */
public interface LinesUpLocally {
}
