package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.confirmed;
import static io.cerberus.cli.CheckRuns.count;
import static io.cerberus.cli.CheckRuns.injected;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Registers;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The safety checker in short runs: real client JVMs, real faults (SIGSTOP past the lease, SIGKILL while holding,
 * connections cut or slowed through a proxy) on a real redis-server and the file engine. Also its negative
 * controls: without the lock, and with fencing ignored, it must find violations; a run in which no client held the
 * lock must say so (NO_PROGRESS, exit code 2), never SAFE. Server faults: {@link CheckServerFaultsTest}.
 */
class CheckCommandTest {
    private static final Duration RUN_LIMIT = CheckRuns.RUN_LIMIT;

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    private Cli.Result check(String... args) {
        return CheckRuns.check(dir, args);
    }

    @Test
    void theFileEngineStaysSafeUnderPausesAndKills() throws Exception {
        // long critical sections and several kills, so that a kill lands on a holder even when signals are slow to
        // arrive
        Cli.Result run = check("--engine", "file:" + dir.resolve("locks"), "--think", "500ms", "--duration", "8s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("verdict:               SAFE\n");
        assertThat(run.stdout()).containsPattern("pause=[1-9]").containsPattern("kill=[1-9]");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "overlapping holds"))
                .as("a stopped process keeps its OS lock")
                .isZero();
        assertThat(run.stdout()).containsPattern("recovery after a holder was killed: \\[");
        assertThat(Files.readString(dir.resolve("out/timeline.html")))
                .contains("<svg")
                .contains("kill");
    }

    @Test
    void aLeaderPausedPastItsLeaseIsDeposedItsLateWriteRefusedByItsTermAndAKilledLeaderReplacedWithinTheLease() {
        // each loop is a participant: elected, it writes once with its term as the token, then steps down
        Cli.Result run = check(
                "--engine",
                REDIS.uri(),
                "--primitive",
                "leader",
                "--faults",
                "pause,kill",
                "--think",
                "500ms",
                "--duration",
                "10s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("leader election on");
        assertThat(run.stdout()).containsPattern("verdict: +SAFE");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards"))
                .as("terms strictly increase")
                .isZero();
        assertThat(count(run.stdout(), "holds (operations)")).isPositive();
    }

    @Test
    void redisWithFencingLosesNoUpdateWhenAHolderIsPausedPastItsLease() {
        // a long critical section, so that the pause lands inside it even when signals are slow to arrive
        Cli.Result run = check("--engine", REDIS.uri(), "--faults", "pause", "--think", "500ms", "--duration", "8s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("verdict:               SAFE_WITH_FENCING");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
        assertThat(count(run.stdout(), "stale writes stopped"))
                .as("the paused holder's late write")
                .isPositive();
    }

    @Test
    void manyLocksAreEachJudgedOnTheirOwnRegisterUnderFaultsInParallel() throws Exception {
        Cli.Result run = check(
                "--engine",
                REDIS.uri(),
                "--locks",
                "8",
                "--faults",
                "pause,kill",
                "--parallel-faults",
                "2",
                "--fault-every",
                "300ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout())
                .contains("on 8 locks")
                .containsPattern("locks: +8, each judged on its own; worst: cerberus-check-[0-7] ");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
        for (int lock = 0; lock < 8; lock++) {
            assertThat(Registers.file(dir.resolve("out").resolve("register-" + lock))
                            .read()
                            .value())
                    .as("updates of lock %d's register", lock)
                    .isPositive();
        }
        // a fault began on another client while a pause was still on
        List<HoldLog.Event> faults = HoldLog.read(dir.resolve("out").resolve("faults.log"));
        boolean overlapped = false;
        for (HoldLog.Event pause : faults.stream()
                .filter(event -> event.detail().startsWith("pause"))
                .toList()) {
            long resumed = faults.stream()
                    .filter(event -> event.client().equals(pause.client())
                            && event.detail().equals("resume")
                            && event.nanos() > pause.nanos())
                    .mapToLong(HoldLog.Event::nanos)
                    .min()
                    .orElse(Long.MAX_VALUE);
            overlapped |= faults.stream()
                    .anyMatch(event -> !event.client().equals(pause.client())
                            && event.detail().equals("kill")
                            && event.nanos() > pause.nanos()
                            && event.nanos() < resumed);
        }
        assertThat(overlapped)
                .as("a kill during another client's pause, in:%n%s", faults)
                .isTrue();
    }

    @Test
    void aPartitionedRedisClientLosesNoUpdate() throws Exception {
        Cli.Result run = check("--server", "redis", "--faults", "partition");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).containsPattern("partition=[1-9]").containsPattern("heal=[1-9]");
        // every partition was applied by each of the client's proxies, and healed; that the client felt it is not
        // asserted: one waiting on another's hold when it is cut off may send nothing until the heal, and the
        // checker rightly leaves such a partition unconfirmed
        String faults = Files.readString(dir.resolve("out").resolve("faults.log"));
        assertThat(faults).as("partitions the proxies did not apply").doesNotContain("proxies changed mode");
        assertThat(faults.lines()
                        .filter(line -> line.contains("confirmed partition: "))
                        .count()) // "unconfirmed" too
                .as("partitions with a verdict on the client")
                .isEqualTo(injected(run.stdout(), "partition"));
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
    }

    @Test
    void aRedisClientWhoseConnectionsAreCutLosesNoUpdate() {
        Cli.Result run = check("--server", "redis", "--faults", "drop");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(confirmed(run.stdout(), "drop"))
                .as("cut and felt by the client")
                .isEqualTo(injected(run.stdout(), "drop"))
                .isPositive();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
    }

    @Test
    void aRedisClientWhoseTrafficIsDelayedLosesNoUpdate() {
        Cli.Result run = check("--server", "redis", "--faults", "delay", "--delay", "200ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(confirmed(run.stdout(), "delay"))
                .as("slowed, as the client measured")
                .isEqualTo(injected(run.stdout(), "delay"))
                .isPositive();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
    }

    @Test
    void negativeControlWithoutTheLockIsUnsafe() {
        Cli.Result run = check("--no-lock", "--faults", "none", "--duration", "2s", "--think", "20ms");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("verdict:               UNSAFE");
        assertThat(count(run.stdout(), "lost updates")).isPositive();
    }

    @Test
    void negativeControlWithFencingIgnoredLosesTheUpdateThatFencingStops() {
        Cli.Result run = check(
                "--engine", REDIS.uri(), "--faults", "pause", "--no-fencing", "--think", "500ms", "--duration", "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(count(run.stdout(), "lost updates")).isPositive();
        assertThat(count(run.stdout(), "stale writes stopped")).isZero();
    }

    @Test
    void aHandRolledSetNxPxLockWithAPlainDelLosesUpdatesWhenItsHolderIsPaused() {
        Cli.Result run = check(
                "--server",
                "redis",
                "--recipe",
                "set-nx-px-del",
                "--faults",
                "pause",
                "--think",
                "300ms",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("recipe set-nx-px-del on redis://");
        assertThat(count(run.stdout(), "lost updates")).isPositive();
        assertThat(count(run.stdout(), "overlapping holds")).isPositive();
    }

    @Test
    void aHandRolledSetNxThenExpireLockIsStuckForeverOnceAClientDiesBetweenTheTwo() {
        Cli.Result run = check(
                "--server", "redis", "--recipe", "setnx-expire", "--faults", "between-steps", "--duration", "12s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.STUCK);
        assertThat(run.stdout()).containsPattern("faults confirmed: +1: \\{between-steps=1\\}");
        assertThat(run.stdout())
                .containsPattern("stuck: +cerberus-check: asked for, and granted to nobody, for the last [0-9.]+ ms");
        assertThat(count(run.stdout(), "lost updates")).isZero();
    }

    @Test
    void aRunInWhichNoClientEverHeldTheLockIsNoProgressNeverSafe() {
        String engine = "file:" + dir.resolve("locks");
        // the lock is held here, outside the run, for the whole of it: no client of the run ever gets it
        try (Cerberus outside = Cerberus.builder().engine(engine).build()) {
            DistributedLock lock = outside.lock("cerberus-check");
            assertThat(lock.tryLock()).isTrue();
            Cli.Result run = check("--engine", engine, "--faults", "none", "--duration", "2s");

            assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.NO_PROGRESS);
            assertThat(run.stdout()).contains("verdict:               NO_PROGRESS\n");
            assertThat(count(run.stdout(), "holds (operations)")).isZero();
            lock.unlock();
        }
    }

    @Test
    void badSettingsAreUsageErrors() {
        Cli.Result run = Cli.run(RUN_LIMIT, "check", "--clients", "1");
        assertThat(run.exitCode()).isEqualTo(64);
        assertThat(run.stderr()).contains("--clients must be 2 to 16");
        Cli.Result failpoint = Cli.usage("check", "--faults", "between-steps");
        assertThat(failpoint.exitCode()).isEqualTo(64);
        assertThat(failpoint.stderr()).contains("--faults between-steps needs --recipe setnx-expire");
        Cli.Result recipeOnRedis = Cli.usage("check", "--recipe", "unique-row", "--server", "redis");
        assertThat(recipeOnRedis.exitCode()).isEqualTo(64);
        assertThat(recipeOnRedis.stderr()).contains("--recipe unique-row needs a jdbc: URL");
        Cli.Result parallel = Cli.usage("check", "--parallel-faults", "3");
        assertThat(parallel.exitCode()).isEqualTo(64);
        assertThat(parallel.stderr()).contains("--parallel-faults must be 1 to --clients - 1 (2");
        Cli.Result length = Cli.usage("check", "--fault-length", "0ms");
        assertThat(length.exitCode()).isEqualTo(64);
        assertThat(length.stderr()).contains("--fault-length must be at least 1ms, was 0ms");
        Cli.Result spacing = Cli.usage("check", "--faults", "pause,kill", "--server-fault-every", "5s");
        assertThat(spacing.exitCode()).isEqualTo(64);
        assertThat(spacing.stderr()).contains("--server-fault-every needs a server fault in --faults (server-kill");
        Cli.Result fault = Cli.usage("check", "--faults", "pause,flood");
        assertThat(fault.exitCode()).isEqualTo(64);
        assertThat(fault.stderr()).contains("'flood'");
        Cli.Result primitive = Cli.usage("check", "--primitive", "queue");
        assertThat(primitive.exitCode()).isEqualTo(64);
        assertThat(primitive.stderr()).contains("--primitive takes lock, leader or semaphore; 'queue' is none of them");
        Cli.Result leaderRecipe = Cli.usage("check", "--primitive", "leader", "--no-lock");
        assertThat(leaderRecipe.exitCode()).isEqualTo(64);
        assertThat(leaderRecipe.stderr()).contains("--primitive leader elects with Cerberus");
        Cli.Result serverKill = Cli.usage("check", "--faults", "server-kill");
        assertThat(serverKill.exitCode()).isEqualTo(64);
        assertThat(serverKill.stderr()).contains("needs --server");
        Cli.Result majority = Cli.usage("check", "--server", "redis", "--faults", "majority-kill");
        assertThat(majority.exitCode()).isEqualTo(64);
        assertThat(majority.stderr()).contains("needs --server redlock");
        Cli.Result partition = Cli.usage("check", "--faults", "partition", "--engine", "file:" + dir);
        assertThat(partition.exitCode()).isEqualTo(64);
        assertThat(partition.stderr())
                .contains("partition works with redis://, zk://, etcd://, memcached:// and jdbc: engines");
        Cli.Result leaderKill = Cli.usage("check", "--server", "redlock", "--faults", "leader-kill");
        assertThat(leaderKill.exitCode()).isEqualTo(64);
        assertThat(leaderKill.stderr()).contains("leader-kill needs --server zk or --server etcd");
        Cli.Result unknownServer = Cli.usage("check", "--server", "consul");
        assertThat(unknownServer.exitCode()).isEqualTo(64);
        assertThat(unknownServer.stderr())
                .contains(
                        "--server takes redis, redlock, sentinel, cluster, postgres, mariadb, h2, zk, etcd, memcached, was 'consul'");
        Cli.Result memcachedLeader = Cli.usage("check", "--server", "memcached", "--faults", "leader-kill");
        assertThat(memcachedLeader.exitCode()).isEqualTo(64);
        assertThat(memcachedLeader.stderr()).contains("--faults leader-kill needs --server zk or --server etcd");
        Cli.Result memcachedAof = Cli.usage("check", "--server", "memcached", "--persistence", "aof");
        assertThat(memcachedAof.exitCode()).isEqualTo(64);
        assertThat(memcachedAof.stderr())
                .contains(
                        "--persistence applies to --server redis, redlock, sentinel, cluster and h2; --server memcached keeps"
                                + " nothing across a restart");
        Cli.Result persistence = Cli.usage("check", "--server", "zk", "--persistence", "aof");
        assertThat(persistence.exitCode()).isEqualTo(64);
        assertThat(persistence.stderr())
                .contains(
                        "--persistence applies to --server redis, redlock, sentinel, cluster and h2; --server zk keeps its own data");
        Cli.Result majorityMemcached = Cli.usage("check", "--server", "memcached", "--faults", "majority-kill");
        assertThat(majorityMemcached.exitCode()).isEqualTo(64);
        assertThat(majorityMemcached.stderr())
                .contains("--faults majority-kill needs --server redlock, --server zk or --server etcd");
        Cli.Result failover = Cli.usage("check", "--server", "redis", "--faults", "failover");
        assertThat(failover.exitCode()).isEqualTo(64);
        assertThat(failover.stderr()).contains("--faults failover needs --server sentinel");
        Cli.Result unreplicated = Cli.usage("check", "--server", "zk", "--faults", "failover-unreplicated");
        assertThat(unreplicated.exitCode()).isEqualTo(64);
        assertThat(unreplicated.stderr()).contains("--faults failover-unreplicated needs --server sentinel");
        Cli.Result sentinelKill = Cli.usage("check", "--server", "sentinel", "--faults", "server-kill");
        assertThat(sentinelKill.exitCode()).isEqualTo(64);
        assertThat(sentinelKill.stderr()).contains("killed by --faults failover");
        Cli.Result sentinelDrop = Cli.usage("check", "--server", "sentinel", "--faults", "drop");
        assertThat(sentinelDrop.exitCode()).isEqualTo(64);
        assertThat(sentinelDrop.stderr()).contains("need the servers in the engine URI");
        Cli.Result clusterKill = Cli.usage("check", "--server", "cluster", "--faults", "server-kill");
        assertThat(clusterKill.exitCode()).isEqualTo(64);
        assertThat(clusterKill.stderr()).contains("with --server cluster the masters are killed by --faults failover");
        Cli.Result clusterDrop = Cli.usage("check", "--server", "cluster", "--faults", "drop");
        assertThat(clusterDrop.exitCode()).isEqualTo(64);
        assertThat(clusterDrop.stderr()).contains("the clients of --server cluster learn the nodes from the cluster");
        Cli.Result postgresAof = Cli.usage("check", "--server", "postgres", "--persistence", "aof");
        assertThat(postgresAof.exitCode()).isEqualTo(64);
        assertThat(postgresAof.stderr())
                .contains("--persistence applies to --server redis, redlock, sentinel, cluster and h2");
        Cli.Result h2Aof = Cli.usage("check", "--server", "h2", "--persistence", "aof");
        assertThat(h2Aof.exitCode()).isEqualTo(64);
        assertThat(h2Aof.stderr()).contains("--persistence takes delayed or commit with --server h2, was 'aof'");
        Cli.Result redisCommit = Cli.usage("check", "--server", "redis", "--persistence", "commit");
        assertThat(redisCommit.exitCode()).isEqualTo(64);
        assertThat(redisCommit.stderr()).contains("--persistence takes none or aof with --server redis, was 'commit'");
        Cli.Result jdbcMode = Cli.usage("check", "--server", "redis", "--jdbc-mode", "session");
        assertThat(jdbcMode.exitCode()).isEqualTo(64);
        assertThat(jdbcMode.stderr()).contains("--jdbc-mode applies to --server postgres, mariadb and h2");
        Cli.Result bouncerOnRedis = Cli.usage("check", "--server", "redis", "--pgbouncer", "session");
        assertThat(bouncerOnRedis.exitCode()).isEqualTo(64);
        assertThat(bouncerOnRedis.stderr()).contains("--pgbouncer applies to --server postgres");
        Cli.Result statementPooling = Cli.usage("check", "--server", "postgres", "--pgbouncer", "statement");
        assertThat(statementPooling.exitCode()).isEqualTo(64);
        assertThat(statementPooling.stderr()).contains("--pgbouncer takes session or transaction, was 'statement'");
        Cli.Result delayWithout = Cli.usage("check", "--server", "redis", "--delay", "100ms");
        assertThat(delayWithout.exitCode()).isEqualTo(64);
        assertThat(delayWithout.stderr()).contains("--delay applies to --faults delay");
        Cli.Result noDelay = Cli.usage("check", "--server", "redis", "--faults", "delay", "--delay", "0");
        assertThat(noDelay.exitCode()).isEqualTo(64);
        assertThat(noDelay.stderr()).contains("--delay must be more than 0");
        Cli.Result twoReplicas =
                Cli.usage("check", "--server", "sentinel", "--faults", "failover", "--wait-replicas", "2");
        assertThat(twoReplicas.exitCode()).isEqualTo(64);
        assertThat(twoReplicas.stderr())
                .contains(
                        "--wait-replicas must be 0 or 1 (--server sentinel and cluster run one replica of each primary), was 2");
        Cli.Result waitWithout = Cli.usage("check", "--server", "redis", "--wait-replicas", "1");
        assertThat(waitWithout.exitCode()).isEqualTo(64);
        assertThat(waitWithout.stderr()).contains("--wait-replicas applies to --server sentinel");
    }
}
