package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The benchmark runs end to end (briefly) against a real redis-server; figures are not judged here. */
class BenchSmokeTest {

    @Test
    void everyPeerCompletesCyclesAndTheReportHasARowEach() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            List<Bench.Result> results = Bench.run(redis, List.of(2), Duration.ofMillis(300), Duration.ofMillis(100),
                    List.of("uncontended", "contended", "idempotent", "replay"),
                    List.of("cerberus", "redisson", "spring", "setnx", "roundtrip", "jvm"));

            assertThat(results).hasSize(10 + 6);
            assertThat(results).allSatisfy(result -> assertThat(result.cycles()).as(result.peer()).isPositive());
            String report = Report.markdown(results, redis.version(), List.of(2), Duration.ofMillis(300));
            assertThat(report).contains("### uncontended", "### contended", "| Cerberus | 2 |", "| Redisson RLock | 2 |", "1.00×",
                    "### idempotent", "### replay", "| Cerberus IdempotencyGuard | 2 |", "| SET NX + SET (floor) | 2 |", "vs the floor");
        }
    }
}
