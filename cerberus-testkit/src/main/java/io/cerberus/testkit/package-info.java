/**
 * Test support for engine modules: the conformance suite every engine passes against its real
 * server ({@link io.cerberus.testkit.AbstractLockEngineConformanceTest},
 * {@link io.cerberus.testkit.AbstractMultiProcessConformanceTest}), failover under load across
 * processes ({@link io.cerberus.testkit.AbstractFailoverAcrossProcessesTest}), child JVMs that hold locks,
 * and helpers to run real servers on free loopback ports.
 */
package io.cerberus.testkit;
