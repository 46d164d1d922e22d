package io.cerberus.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.testkit.Poll;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The drop-in as an application meets it: two Spring contexts (two instances) with ShedLock's
 * {@code @SchedulerLock} on a {@code @Scheduled} method and only the provider bean changed; the
 * job never runs in both at once, shutdown included (the provider closes before the client, and
 * waits for a running job).
 */
class SchedulerLockTest {
    static final AtomicInteger RUNNING = new AtomicInteger();
    static final AtomicInteger MOST_AT_ONCE = new AtomicInteger();
    static final AtomicInteger RUNS = new AtomicInteger();

    @Test
    @SuppressWarnings("try")
    void aScheduledJobUnderSchedulerLockNeverRunsInTwoInstancesAtOnce() {
        try (AnnotationConfigApplicationContext one = new AnnotationConfigApplicationContext(Instance.class);
                AnnotationConfigApplicationContext two = new AnnotationConfigApplicationContext(Instance.class)) {
            Poll.until("the job ran 30 times", Duration.ofSeconds(20), () -> RUNS.get() >= 30);
        }
        assertThat(MOST_AT_ONCE.get()).isEqualTo(1);
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
    static class Instance {
        @Bean(destroyMethod = "close")
        Cerberus cerberus() {
            return Cerberus.connect("mem:shedlock-spring");
        }

        @Bean
        LockProvider lockProvider(Cerberus cerberus) {
            return new CerberusLockProvider(cerberus);
        }

        @Bean
        Report report() {
            return new Report();
        }
    }

    static class Report {
        @Scheduled(fixedDelay = 5)
        @SchedulerLock(name = "report")
        public void run() {
            MOST_AT_ONCE.accumulateAndGet(RUNNING.incrementAndGet(), Math::max);
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the context is closing
            } finally {
                RUNNING.decrementAndGet();
                RUNS.incrementAndGet();
            }
        }
    }
}
