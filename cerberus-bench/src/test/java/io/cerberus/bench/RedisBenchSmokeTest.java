package io.cerberus.bench;

import static io.cerberus.bench.BenchSmoke.CELL;
import static io.cerberus.bench.BenchSmoke.NAMES;
import static io.cerberus.bench.BenchSmoke.THREADS;
import static io.cerberus.bench.BenchSmoke.WAITERS;
import static io.cerberus.bench.BenchSmoke.WARMUP;
import static io.cerberus.bench.BenchSmoke.runAndReport;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bench's smoke run on Redis (see {@link BenchSmoke}): every peer completes cycles in each workload and the
 * report has a row each; the wake-up workload measures every distributed peer.
 */
class RedisBenchSmokeTest {
    @Test
    void everyRedisPeerCompletesCyclesAndTheReportHasARowEach() throws Exception {
        try (EngineGroup group = EngineGroups.redis(RedisProcess.start(), EngineGroups.PEERS.get("redis"))) {
            assertThat(runAndReport(group))
                    .contains(
                            "### Redis: uncontended",
                            "### Redis: contended",
                            "| Cerberus | 2 |",
                            "| Redisson RLock | 2 | ",
                            "1.00×",
                            "### Redis: idempotent",
                            "### Redis: replay",
                            "| Cerberus IdempotencyGuard | 2 |",
                            "| SET NX + SET (floor) | 2 |",
                            "vs the floor",
                            "vs Redisson",
                            "### Redis: many-names",
                            "### Redis: async",
                            "| Redisson RLock | 50 |",
                            "keys left per name",
                            "### Redis: held-locks",
                            "| Redisson RLock | watchdog",
                            "### Redis: semaphore\n",
                            "### Redis: semaphore-contended",
                            "| Redisson RPermitExpirableSemaphore | 2 | ",
                            "| Redisson RSemaphore (permits never expire) | 2 | ",
                            "vs Redisson PES");
        }
    }

    @Test
    void wakeUpOnRedisMeasuresEveryDistributedPeerAndLeavesTheFloorsOut() throws Exception {
        try (EngineGroup group = EngineGroups.redis(RedisProcess.start(), EngineGroups.PEERS.get("redis"))) {
            List<Bench.Result> results = Bench.run(
                    group, THREADS, CELL, WARMUP, List.of(Bench.WAKE_UP), NAMES, List.of(WAITERS), BenchProgress.NONE);
            assertThat(results)
                    .extracting(Bench.Result::peer)
                    .containsExactly("Cerberus", "Redisson RLock", "Redisson RFencedLock", "Spring RedisLockRegistry");
            assertThat(results).allSatisfy(result -> {
                assertThat(result.workload()).isEqualTo(Bench.WAKE_UP);
                assertThat(result.cycles()).as(result.peer() + " rounds").isPositive();
                assertThat(result.p50()).as(result.peer() + " wake-up p50").isPositive();
                assertThat(result.p99()).as(result.peer() + " wake-up p99").isGreaterThanOrEqualTo(result.p50());
                assertThat(result.max()).as(result.peer() + " wake-up max").isGreaterThanOrEqualTo(result.p99());
                assertThat(result.max())
                        .as(result.peer() + " wake-up max, below the wait the workload allows")
                        .isLessThan(WakeUp.MOST_WAKE_UP.toNanos());
                assertThat(result.requestsPerCycle())
                        .as(result.peer() + " Redis commands per round: two locks and two releases at least")
                        .isGreaterThanOrEqualTo(4);
            });
            String report = Report.markdown(results, List.of(), List.of(group), THREADS, CELL, "smoke");
            assertThat(report)
                    .contains(
                            "### Redis: wake-up",
                            "vs Redisson (its p50 / this p50: above 1 wakes sooner)",
                            "| Redisson RLock | ",
                            "| 1.00× |",
                            "(smoke-redis-wake-up.svg)")
                    .doesNotContain("(floor)", "ReentrantLock");
            assertThat(Report.charts(results, List.of(), List.of(group), THREADS))
                    .containsOnlyKeys("redis-wake-up");
        }
    }
}
