package io.cerberus.bench;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/** Starts the server of each engine of a run and names the peers that run against it. */
final class EngineGroups {
    /** Engines in run order, and the peers of each by their {@code --peers} names, in report order. */
    static final Map<String, List<String>> PEERS = peers();

    private EngineGroups() {}

    private static Map<String, List<String>> peers() {
        Map<String, List<String>> peers = new LinkedHashMap<>();
        peers.put(
                "redis",
                List.of(
                        "cerberus",
                        "redisson",
                        "redisson-fenced",
                        "redisson-semaphore",
                        "spring",
                        "setnx",
                        "roundtrip",
                        "scripts",
                        "jvm"));
        peers.put("zk", List.of("cerberus", "curator", "roundtrip"));
        peers.put("etcd", List.of("cerberus", "jetcd", "roundtrip"));
        peers.put("postgres", List.of("cerberus", "session", "datasource", "spring", "shedlock", "roundtrip"));
        peers.put("mariadb", List.of("cerberus", "session", "datasource", "spring", "shedlock", "roundtrip"));
        return peers;
    }

    /**
     * Checks the options before any server starts.
     *
     * @throws IllegalArgumentException naming the unknown engine or peer
     */
    static void check(List<String> engines, List<String> peerNames) {
        for (String engine : engines) {
            if (!PEERS.containsKey(engine)) {
                throw new IllegalArgumentException(
                        "unknown engine '" + engine + "'; engines: " + String.join(", ", PEERS.keySet()));
            }
        }
        for (String name : peerNames) {
            if (engines.stream().noneMatch(engine -> PEERS.get(engine).contains(name))) {
                throw new IllegalArgumentException(
                        "peer '" + name + "' is in none of the engines " + engines + "; peers: " + PEERS);
            }
        }
    }

    /** The Redis group, on a server started here or given with {@code --redis host:port}. */
    static EngineGroup redis(RedisProcess redis, List<String> peerNames) {
        Map<String, Supplier<Peer>> lockPeers = new LinkedHashMap<>();
        Map<String, PeerSpec> sharedPeers = new LinkedHashMap<>();
        Map<String, Supplier<Peer>> guardPeers = new LinkedHashMap<>();
        Map<String, HeldLocks.Holder> holders = new LinkedHashMap<>();
        Map<String, IntFunction<Peer>> semaphorePeers = new LinkedHashMap<>();
        for (String name : selected("redis", peerNames)) {
            switch (name) {
                case "cerberus" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("redis", name, redis.uri(), 0));
                    guardPeers.put(name, () -> Peers.cerberusGuard(redis.uri()));
                    semaphorePeers.put(name, permits -> SemaphorePeers.cerberus(redis.uri(), permits));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.CERBERUS_RENEWAL, lease -> Peers.cerberus(redis.uri(), lease)));
                }
                case "redisson" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("redis", name, redis.host() + ":" + redis.port(), 0));
                    semaphorePeers.put(
                            name, permits -> SemaphorePeers.redissonExpirable(redis.host(), redis.port(), permits));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    "watchdog (lockWatchdogTimeout = lease), every lease/3",
                                    lease -> Peers.redisson(redis.host(), redis.port(), lease, false)));
                }
                case "redisson-fenced" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("redis", name, redis.host() + ":" + redis.port(), 0));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    "watchdog (lockWatchdogTimeout = lease), every lease/3",
                                    lease -> Peers.redisson(redis.host(), redis.port(), lease, true)));
                }
                case "redisson-semaphore" ->
                    semaphorePeers.put(
                            name, permits -> SemaphorePeers.redissonSemaphore(redis.host(), redis.port(), permits));
                case "spring" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("redis", name, redis.host() + ":" + redis.port(), 0));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    "opt-in renewal task per lock (expireAfter = lease; a TaskScheduler of 2 threads)",
                                    lease -> Peers.springRedis(redis.host(), redis.port(), lease)));
                }
                case "setnx" -> guardPeers.put(name, () -> Peers.setNxFloor(redis.host(), redis.port()));
                case "roundtrip" -> {
                    lockPeers.put(name, () -> Peers.roundTripFloor(redis.host(), redis.port()));
                    guardPeers.put(name, () -> Peers.roundTripFloor(redis.host(), redis.port()));
                }
                case "scripts" -> lockPeers.put(name, () -> Peers.scriptFloor(redis.host(), redis.port()));
                default -> lockPeers.put(name, Peers::jvmFloor);
            }
        }
        return new EngineGroup(
                "redis",
                "Redis",
                redis.version(),
                Peers.REDISSON,
                "Redisson",
                "Redis commands run per cycle (inside scripts too)",
                redis::commandCalls,
                lockPeers,
                guardPeers,
                sharedPeers,
                holders,
                new EngineGroup.Residue("keys", redis::keys, "used_memory", redis::usedMemory),
                new EngineGroup.Semaphores(SemaphorePeers.REDISSON_EXPIRABLE, "Redisson PES", semaphorePeers),
                redis::close);
    }

    static EngineGroup zooKeeper(List<String> peerNames) {
        // ticks, sessions and JIT as a production server has them, without fsync like the bench's other servers
        ZooKeeperServer zk = ZooKeeperServer.builder()
                .tickTime(Duration.ofSeconds(2))
                .sessionTimeouts(Duration.ofSeconds(4), Duration.ofSeconds(40))
                .forceSync(false)
                // the container sweep every second, with no cap on deletions: many-names counts after it
                .jvmOptions(
                        "-Xmx256m", "-Dznode.container.checkIntervalMs=1000", "-Dznode.container.maxPerMinute=10000000")
                .startTimeout(Duration.ofSeconds(60))
                .start();
        Map<String, Supplier<Peer>> lockPeers = new LinkedHashMap<>();
        Map<String, PeerSpec> sharedPeers = new LinkedHashMap<>();
        Map<String, HeldLocks.Holder> holders = new LinkedHashMap<>();
        Map<String, IntFunction<Peer>> semaphorePeers = new LinkedHashMap<>();
        for (String name : selected("zk", peerNames)) {
            switch (name) {
                case "cerberus" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("zk", name, zk.uri(), 0));
                    semaphorePeers.put(name, permits -> SemaphorePeers.cerberus(zk.uri(), permits));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.SESSION_RENEWAL,
                                    lease -> Peers.cerberus(
                                            zk.uri() + "?sessionTimeout=" + lease.toMillis() + "ms", lease)));
                }
                case "curator" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("zk", name, zk.connectString(), 0));
                    semaphorePeers.put(name, permits -> SemaphorePeers.curator(zk.connectString(), permits));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.SESSION_RENEWAL,
                                    lease -> ZooKeeperPeers.curator(zk.connectString(), lease)));
                }
                default -> lockPeers.put(name, () -> ZooKeeperPeers.roundTripFloor(zk.connectString()));
            }
        }
        return new EngineGroup(
                "zk",
                "ZooKeeper",
                "ZooKeeper " + zk.version(),
                ZooKeeperPeers.CURATOR,
                "Curator",
                "ZooKeeper packets received per cycle (pings too)",
                () -> Long.parseLong(zk.srvr().get("Received")),
                lockPeers,
                Map.of(),
                sharedPeers,
                holders,
                new EngineGroup.Residue(
                        "znodes",
                        () -> Long.parseLong(zk.srvr().get("Node count")),
                        "data size",
                        () -> Long.parseLong(zk.mntr().get("zk_approximate_data_size")),
                        Duration.ofMillis(2500)),
                new EngineGroup.Semaphores(SemaphorePeers.CURATOR, "Curator", semaphorePeers),
                zk::close);
    }

    static EngineGroup etcd(List<String> peerNames) {
        EtcdServer etcd =
                EtcdServer.builder().startTimeout(Duration.ofSeconds(60)).start();
        Map<String, Supplier<Peer>> lockPeers = new LinkedHashMap<>();
        Map<String, PeerSpec> sharedPeers = new LinkedHashMap<>();
        Map<String, HeldLocks.Holder> holders = new LinkedHashMap<>();
        for (String name : selected("etcd", peerNames)) {
            switch (name) {
                case "cerberus" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("etcd", name, etcd.uri(), 0));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.CERBERUS_RENEWAL + "; the client's etcd lease kept alive",
                                    lease -> Peers.cerberus(
                                            etcd.uri() + "?ttl=" + Math.max(1, (lease.toMillis() + 999) / 1000),
                                            lease)));
                }
                case "jetcd" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec("etcd", name, etcd.endpoint(), 0));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    "one etcd lease (TTL = lease) kept alive every TTL/3, no per-lock renewal",
                                    lease -> EtcdPeers.jetcdLockOnOneLease(etcd.endpoint(), lease)));
                }
                default -> lockPeers.put(name, () -> EtcdPeers.roundTripFloor(etcd.endpoint()));
            }
        }
        // gRPC messages: unary requests, and each message on a stream; keys of every prefix; freed pages excluded from
        // the size
        return new EngineGroup(
                "etcd",
                "etcd",
                "etcd " + etcd.version(),
                EtcdPeers.JETCD_LOCK,
                "jetcd Lock",
                "etcd gRPC messages received per cycle (keep-alives too)",
                () -> etcd.counter("grpc_server_msg_received_total"),
                lockPeers,
                Map.of(),
                sharedPeers,
                holders,
                new EngineGroup.Residue(
                        "keys", () -> (long) etcd.gauge("etcd_debugging_mvcc_keys_total"), "db size in use", () ->
                                (long) etcd.gauge("etcd_mvcc_db_total_size_in_use_in_bytes")),
                EngineGroup.Semaphores.NONE,
                etcd::close);
    }

    /**
     * The PostgreSQL group; every pool (Cerberus's own and the peers' HikariCP pools) gets
     * {@code poolSize} connections.
     */
    static EngineGroup postgres(List<String> peerNames, int poolSize) {
        BenchPostgres postgres = BenchPostgres.start();
        postgres.execute(JdbcPeers.INT_LOCK_DDL);
        postgres.execute(JdbcPeers.SHEDLOCK_DDL);
        return sql(
                "postgres",
                "PostgreSQL",
                "PostgreSQL statements per cycle (pg_stat_statements)",
                postgres,
                peerNames,
                poolSize);
    }

    /**
     * The MariaDB group; every pool (Cerberus's own and the peers' HikariCP pools) gets
     * {@code poolSize} connections.
     */
    static EngineGroup mariaDb(List<String> peerNames, int poolSize) {
        BenchMariaDb mariaDb = BenchMariaDb.start();
        mariaDb.execute(JdbcPeers.INT_LOCK_DDL_MYSQL);
        mariaDb.execute(JdbcPeers.SHEDLOCK_DDL_MYSQL);
        return sql("mariadb", "MariaDB", "MariaDB statements per cycle (Questions)", mariaDb, peerNames, poolSize);
    }

    private static EngineGroup sql(
            String engine,
            String title,
            String statementsLabel,
            SqlServer server,
            List<String> peerNames,
            int poolSize) {
        String url = server.jdbcUrl();
        Map<String, Supplier<Peer>> lockPeers = new LinkedHashMap<>();
        Map<String, PeerSpec> sharedPeers = new LinkedHashMap<>();
        Map<String, HeldLocks.Holder> holders = new LinkedHashMap<>();
        for (String name : selected(engine, peerNames)) {
            switch (name) {
                case "cerberus" -> {
                    shared(
                            lockPeers,
                            sharedPeers,
                            new PeerSpec(engine, name, url + "&cerberus.poolSize=" + poolSize, poolSize));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.CERBERUS_RENEWAL,
                                    lease -> Peers.cerberus(url + "&cerberus.poolSize=" + poolSize, lease)));
                }
                // the way the Spring Boot starter's "jdbc:datasource" runs: on the application's pool
                case "datasource" -> shared(lockPeers, sharedPeers, new PeerSpec(engine, name, url, poolSize));
                // session mode holds a connection per held lock: not in held-locks (10,000 connections)
                case "session" ->
                    shared(
                            lockPeers,
                            sharedPeers,
                            new PeerSpec(
                                    engine,
                                    name,
                                    url + "&cerberus.poolSize=" + poolSize + "&cerberus.mode=session",
                                    poolSize));
                case "spring" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec(engine, name, url, poolSize));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.NO_RENEWAL + " (timeToLive)",
                                    lease -> JdbcPeers.springJdbc(url, poolSize, HeldLocks.pastTheHold(lease))));
                }
                case "shedlock" -> {
                    shared(lockPeers, sharedPeers, new PeerSpec(engine, name, url, poolSize));
                    holders.put(
                            name,
                            new HeldLocks.Holder(
                                    HeldLocks.NO_RENEWAL + " (lockAtMostFor)",
                                    lease -> JdbcPeers.shedLock(url, poolSize, HeldLocks.pastTheHold(lease))));
                }
                default -> lockPeers.put(name, () -> JdbcPeers.roundTripFloor(url, poolSize));
            }
        }
        return new EngineGroup(
                engine,
                title,
                server.version(),
                JdbcPeers.JDBC_LOCK_REGISTRY,
                "JdbcLockRegistry",
                statementsLabel,
                server.countsStatements() ? server::statements : null,
                lockPeers,
                Map.of(),
                sharedPeers,
                holders,
                new EngineGroup.Residue("rows", server::rows, "database size", server::databaseSize),
                EngineGroup.Semaphores.NONE,
                server::close);
    }

    /** Adds a distributed lock peer, built from its spec here and, in {@code contended-2p}, in a second JVM too. */
    private static void shared(
            Map<String, Supplier<Peer>> lockPeers, Map<String, PeerSpec> sharedPeers, PeerSpec spec) {
        lockPeers.put(spec.peer(), spec::build);
        sharedPeers.put(spec.peer(), spec);
    }

    private static List<String> selected(String engine, List<String> peerNames) {
        return PEERS.get(engine).stream().filter(peerNames::contains).toList();
    }
}
