/**
 * Test support for engine modules: the conformance suite every engine passes against its real
 * server ({@link io.cerberus.testkit.AbstractLockEngineConformanceTest},
 * {@link io.cerberus.testkit.AbstractMultiProcessConformanceTest}), failover under load across
 * processes ({@link io.cerberus.testkit.AbstractFailoverAcrossProcessesTest}), child JVMs that hold locks,
 * and waiting in tests ({@link io.cerberus.testkit.Poll}, {@link io.cerberus.testkit.TestTimes}). The
 * servers themselves are started with the helpers of cerberus-servers ({@code io.cerberus.servers}).
 */
package io.cerberus.testkit;
