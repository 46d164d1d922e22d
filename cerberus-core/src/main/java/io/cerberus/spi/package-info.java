/**
 * What an engine implements: the few atomic, owner-checked operations on a lock (acquire, renew,
 * release), a way to wait for a change, and what it can do. Everything else (reentrancy, lease
 * renewal, deadlines, interruption, listeners) is written once in the core and is not an engine's
 * concern.
 *
 * <p>An engine module registers an {@link io.cerberus.spi.EngineProvider} in
 * {@code META-INF/services/io.cerberus.spi.EngineProvider}; putting the module on the class path is
 * all it takes for its URI scheme to work. Every engine passes the conformance suite of
 * {@code cerberus-testkit} against its real server.
 */
package io.cerberus.spi;
