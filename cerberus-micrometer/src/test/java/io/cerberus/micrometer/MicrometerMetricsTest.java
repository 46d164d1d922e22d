package io.cerberus.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MicrometerMetricsTest {
    private final String store = "mem:micrometer-" + UUID.randomUUID();

    @Test
    void locksSwitchesAndTimesReachTheRegistry() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Cerberus cerberus = Cerberus.builder()
                        .engine("main", store)
                        .engine("spare", store + "-spare")
                        .lockDelay(Duration.ZERO)
                        .metrics(new MicrometerMetrics(registry))
                        .build();
                Cerberus other = Cerberus.builder().engine(store).build()) {
            DistributedLock lock = cerberus.lock("job");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertThat(other.lock("job").tryLock()).isTrue();
            assertThat(cerberus.lock("job").tryLock(5, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(cerberus.runExclusively("job", Duration.ZERO, lease -> {}))
                    .isFalse();
            other.lock("job").unlock();
            cerberus.switchEngine();

            assertThat(registry.get("cerberus.runs.skipped")
                            .tags("engine", "main", "name", "job")
                            .counter()
                            .count())
                    .isEqualTo(1);

            assertThat(registry.get("cerberus.lock.acquire")
                            .tags("engine", "main", "mode", "exclusive", "outcome", "granted")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("cerberus.lock.acquire")
                            .tags("outcome", "timed_out")
                            .timer()
                            .totalTime(TimeUnit.MILLISECONDS))
                    .isGreaterThanOrEqualTo(5);
            assertThat(registry.get("cerberus.lock.held")
                            .tags("engine", "main")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("cerberus.lock.waiting")
                            .tags("engine", "main")
                            .gauge()
                            .value())
                    .as("acquisitions under way, once all ended")
                    .isZero();
            assertThat(registry.get("cerberus.engine.switches")
                            .tags("from", "main", "to", "spare", "reason", "manual")
                            .counter()
                            .count())
                    .isEqualTo(1);
        }
    }

    @Test
    void onTheClassPathItIsFoundAndReportsToTheGlobalRegistry() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try (Cerberus cerberus = Cerberus.connect(store)) {
            assertThat(cerberus.lock("found").tryLock()).isTrue();
            cerberus.lock("found").unlock();
            assertThat(registry.get("cerberus.lock.acquire")
                            .tags("outcome", "granted")
                            .timer()
                            .count())
                    .isGreaterThanOrEqualTo(1);
        } finally {
            Metrics.removeRegistry(registry);
        }
    }
}
