package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * {@link ExclusiveRun @ExclusiveRun}: five instances of an application calling their job on the same
 * ticks run it once per tick; the others skip quietly (no exception, a zero result); a method whose
 * work would end after the run is refused at start-up.
 */
class ExclusiveRunTest {
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final String store = "mem:exclusive-" + UUID.randomUUID();
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @AfterEach
    void stopInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Job job() {
            return new Job();
        }
    }

    /** The scheduled job; in an application it also carries {@code @Scheduled}. */
    static class Job {
        @ExclusiveRun(name = "tick", atLeast = "200ms")
        public int run() {
            assertThat(ExclusiveRuns.assertHeld().lockName()).isEqualTo("tick");
            return RUNS.incrementAndGet();
        }
    }

    private ConfigurableApplicationContext instance(Class<?> app) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(app)
                .web(WebApplicationType.NONE)
                .properties("cerberus.engines=" + store)
                .run();
        instances.add(context);
        return context;
    }

    @Test
    void fiveInstancesOnFiveTicksRunTheJobOncePerTickAndTheOthersSkipQuietly() throws Exception {
        List<Job> jobs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            jobs.add(instance(App.class).getBean(Job.class));
        }
        Cerberus probe = instances.get(0).getBean(Cerberus.class);
        int before = RUNS.get();
        ExecutorService pool = Executors.newFixedThreadPool(jobs.size());
        try {
            for (int tick = 1; tick <= 5; tick++) {
                CyclicBarrier together = new CyclicBarrier(jobs.size());
                List<Future<Integer>> results = new ArrayList<>();
                for (Job job : jobs) {
                    results.add(pool.submit(() -> {
                        together.await();
                        return job.run();
                    }));
                }
                int ran = 0;
                for (Future<Integer> result : results) {
                    ran += result.get(10, TimeUnit.SECONDS) != 0 ? 1 : 0;
                }
                assertThat(ran).as("instances that ran tick %s", tick).isEqualTo(1);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (probe.lock("tick").isLocked() && System.nanoTime() < deadline) {
                    Thread.sleep(10); // a poll with a deadline: the lock is kept 200 ms after the run began
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(RUNS.get() - before).as("runs of five ticks").isEqualTo(5);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class AsyncJobApp {
        @Bean
        AsyncJob asyncJob() {
            return new AsyncJob();
        }
    }

    static class AsyncJob {
        @ExclusiveRun(name = "async")
        public java.util.concurrent.CompletableFuture<Void> run() {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    }

    @Test
    void outsideARunTheAssertionFailsWithTheReason() {
        assertThat(ExclusiveRuns.lease()).isEmpty();
        assertThatThrownBy(ExclusiveRuns::assertHeld)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not in an @ExclusiveRun method");
    }

    @Test
    void aMethodWhoseWorkEndsAfterTheRunIsRefusedAtStartUp() {
        assertThatThrownBy(() -> instance(AsyncJobApp.class))
                .hasStackTraceContaining("@ExclusiveRun on")
                .hasStackTraceContaining("CompletableFuture");
    }
}
