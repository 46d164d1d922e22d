/**
 * Starts real servers and child processes on loopback for the tests, the benchmark and
 * {@code cerberus check}: free ports ({@link io.cerberus.servers.FreePorts}), server programs
 * ({@link io.cerberus.servers.Executables}), child processes
 * ({@link io.cerberus.servers.ManagedProcess}), passwords for the servers
 * ({@link io.cerberus.servers.Passwords}), a TCP proxy that injects network faults
 * ({@link io.cerberus.servers.FaultProxy}) and waiting with a deadline
 * ({@link io.cerberus.servers.Await}), and the servers themselves
 * ({@link io.cerberus.servers.RedisServer}, {@link io.cerberus.servers.MemcachedServer}) and groups of them
 * ({@link io.cerberus.servers.RedisGroup}, {@link io.cerberus.servers.RedisSentinel}, {@link io.cerberus.servers.RedisCluster}),
 * asked about their state with {@link io.cerberus.servers.RespQuery}. The JDK only: no test framework, so the cerberus command
 * and the bench carry it in their jars. Every failure is a {@link io.cerberus.servers.ServerException}
 * that says what failed and how to fix it.
 */
package io.cerberus.servers;
