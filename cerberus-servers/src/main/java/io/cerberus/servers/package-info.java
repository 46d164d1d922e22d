/**
 * Starts real servers and child processes on loopback for the tests, the benchmark,
 * {@code cerberus check} and {@code cerberus servers}. One server process is a
 * {@link io.cerberus.servers.LoopbackServer} (start until it serves, kill, pause, resume,
 * restart); what an engine URI points at, one server or a group, is a
 * {@link io.cerberus.servers.Deployment}:
 * <ul>
 *   <li>Redis: {@link io.cerberus.servers.RedisServer}, {@link io.cerberus.servers.RedisGroup} (Redlock),
 *       {@link io.cerberus.servers.RedisSentinel}, {@link io.cerberus.servers.RedisCluster}, asked with
 *       {@link io.cerberus.servers.RespQuery};</li>
 *   <li>ZooKeeper: {@link io.cerberus.servers.ZooKeeperServer}, {@link io.cerberus.servers.ZooKeeperEnsemble},
 *       asked with {@link io.cerberus.servers.FourLetterWords};</li>
 *   <li>etcd: {@link io.cerberus.servers.EtcdServer}, {@link io.cerberus.servers.EtcdCluster};</li>
 *   <li>memcached: {@link io.cerberus.servers.MemcachedServer};</li>
 *   <li>SQL: {@link io.cerberus.servers.PostgresServer}, {@link io.cerberus.servers.MariaDbServer}, what they share in
 *       {@link io.cerberus.servers.DatabaseServer}; {@link io.cerberus.servers.PgBouncerServer} in front of a PostgreSQL;
 *       {@link io.cerberus.servers.H2Server}, H2's TCP server in a child JVM.</li>
 * </ul>
 * Beside them: child processes ({@link io.cerberus.servers.ManagedProcess},
 * {@link io.cerberus.servers.JavaCommand}), free ports ({@link io.cerberus.servers.FreePorts}),
 * server programs ({@link io.cerberus.servers.Executables}), passwords
 * ({@link io.cerberus.servers.Passwords}), TLS key pairs
 * ({@link io.cerberus.servers.SelfSignedCertificate}), a TCP proxy that injects network faults
 * ({@link io.cerberus.servers.FaultProxy}) and waiting with a deadline
 * ({@link io.cerberus.servers.Await}). The JDK only: no test framework, so the cerberus command
 * and the bench carry it in their jars. Every failure is a {@link io.cerberus.servers.ServerException}
 * that says what failed and how to fix it.
 */
package io.cerberus.servers;
