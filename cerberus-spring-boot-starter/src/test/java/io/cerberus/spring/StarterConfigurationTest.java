package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cerberus.Cerberus;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineSwitchListener;
import io.cerberus.Lease;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.testkit.CountingEngineProvider;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.io.InputStream;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The auto-configuration: properties, beans, start-up failures and the client's life cycle. */
class StarterConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CerberusAutoConfiguration.class, AopAutoConfiguration.class));

    @TempDir
    Path directory;

    @Test
    void withTheMemEngineNamedTheClientHasItAndTheDefaults() {
        runner.withPropertyValues("cerberus.engines=mem:").run(context -> {
            Cerberus cerberus = context.getBean(Cerberus.class);
            assertThat(cerberus.engines()).containsExactly("mem");
            assertThat(cerberus.namespace()).isEqualTo("default");
            // the core's defaults, but a duplicate in progress is rejected (the filter answers 409) unless a wait is
            // set
            assertThat(context.getBean(IdempotencyOptions.class))
                    .isEqualTo(IdempotencyOptions.defaults().rejectingWhenInProgress());
            DistributedLockHold hold = DistributedLockHold.take(cerberus, "defaults");
            assertThat(hold.lease()).isEqualTo(Duration.ofSeconds(30));
            hold.release();
        });
    }

    @Test
    void everyPropertyReachesTheClient() {
        runner.withPropertyValues(
                        "cerberus.engines[0]=counting:mem:starter-props",
                        "cerberus.engines[1]=file:" + directory,
                        "cerberus.namespace=billing",
                        "cerberus.default-lease=10s",
                        "cerberus.connect-timeout=2s",
                        "cerberus.lock-delay=0",
                        "cerberus.failover.enabled=true",
                        "cerberus.failover.after=1s",
                        "cerberus.failover.check-every=200ms",
                        "cerberus.failover.fail-back-after=2s",
                        "cerberus.idempotency.lease=5s",
                        "cerberus.idempotency.wait-when-in-progress=2s",
                        "cerberus.idempotency.fail-open=true",
                        "cerberus.idempotency.store-attempts=5")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Cerberus cerberus = context.getBean(Cerberus.class);
                    CountingEngineProvider.Counting primary = CountingEngineProvider.lastOpened();
                    assertThat(cerberus.engines()).containsExactly("counting", "file");
                    assertThat(cerberus.currentEngine()).isEqualTo("counting");
                    assertThat(cerberus.namespace()).isEqualTo("billing");
                    assertThat(primary.openedWith().connectTimeout())
                            .as("the connect timeout the client opened its engine with")
                            .isEqualTo(Duration.ofSeconds(2));
                    DistributedLockHold hold = DistributedLockHold.take(cerberus, "props");
                    assertThat(hold.lease()).isEqualTo(Duration.ofSeconds(10));
                    hold.release();

                    // lock-delay 0, as the built client shows it: after a switch, a lock held on the old engine by
                    // another
                    // client is granted on the new one at once (with a lock-delay it would also be asked of the old
                    // engine)
                    try (Cerberus other = Cerberus.builder()
                            .engine("mem:starter-props")
                            .namespace("billing")
                            .build()) {
                        assertThat(other.lock("delay").tryLock()).isTrue();
                        cerberus.switchEngine("file");
                        assertThat(cerberus.lock("delay").tryLock())
                                .as("no lock-delay on the client")
                                .isTrue();
                        cerberus.lock("delay").unlock();
                        cerberus.switchEngine("counting");
                        other.lock("delay").unlock();
                    }

                    checkFailoverTimes(
                            cerberus, primary, Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofSeconds(2));

                    IdempotencyOptions options = context.getBean(IdempotencyOptions.class);
                    assertThat(options.lease()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(options.whenInProgress()).isEqualTo(IdempotencyOptions.InProgress.WAIT);
                    assertThat(options.waitAtMost()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(options.whenStoreDown()).isEqualTo(IdempotencyOptions.StoreDown.FAIL_OPEN);
                    assertThat(options.storeAttempts()).isEqualTo(5);
                });
    }

    /**
     * Reads the failover policy back from the client's behaviour: its health checks of the primary
     * come {@code checkEvery} apart, it leaves the primary once the checks have failed for
     * {@code after}, and comes back once they have passed for {@code failBackAfter}.
     */
    private static void checkFailoverTimes(
            Cerberus cerberus,
            CountingEngineProvider.Counting primary,
            Duration checkEvery,
            Duration after,
            Duration failBackAfter)
            throws InterruptedException {
        long firstCheck = primary.monitoringReads();
        long start = System.nanoTime();
        Poll.until(
                "five health checks of the primary",
                TestTimes.millis(3000),
                () -> primary.monitoringReads() - firstCheck >= 5);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("five health checks, %s apart", checkEvery)
                .isGreaterThanOrEqualTo(checkEvery.multipliedBy(4).minusMillis(50));

        java.util.concurrent.BlockingQueue<EngineSwitchEvent> switches =
                new java.util.concurrent.LinkedBlockingQueue<>();
        cerberus.onEngineSwitch(switches::add);
        primary.failMonitoringReads(true);
        long failedAt = System.nanoTime();
        EngineSwitchEvent failover =
                switches.poll(after.plus(TestTimes.millis(3000)).toMillis(), TimeUnit.MILLISECONDS);
        Duration failedFor = Duration.ofNanos(System.nanoTime() - failedAt);
        assertThat(failover).as("a failover").isNotNull();
        assertThat(failover.reason()).isEqualTo(EngineSwitchEvent.Reason.FAILOVER);
        assertThat(failover.to()).isEqualTo("file");
        // the last passed check may have come up to one interval before the checks began to fail
        assertThat(failedFor).as("checks failing until the failover").isGreaterThanOrEqualTo(after.minus(checkEvery));

        primary.failMonitoringReads(false);
        long healedAt = System.nanoTime();
        EngineSwitchEvent failBack =
                switches.poll(failBackAfter.plus(TestTimes.millis(3000)).toMillis(), TimeUnit.MILLISECONDS);
        Duration healedFor = Duration.ofNanos(System.nanoTime() - healedAt);
        assertThat(failBack).as("a fail-back").isNotNull();
        assertThat(failBack.reason()).isEqualTo(EngineSwitchEvent.Reason.FAILBACK);
        assertThat(healedFor).as("checks passing until the fail-back").isGreaterThanOrEqualTo(failBackAfter);
    }

    @Test
    void failoverIsOffUnlessEnabled() {
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.failover.after=3s")
                .run(context -> assertThat(CerberusAutoConfiguration.failoverPolicy(
                                context.getBean(CerberusProperties.class).getFailover()))
                        .isEmpty());
    }

    @Test
    void failoverWithOneEngineFailsTheStartSayingWhy() {
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.failover.enabled=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("failover needs at least two engines");
                });
    }

    @Test
    void aBadValueFailsTheStartNamingTheRule() {
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.default-lease=50ms")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("default lease must be at least 100ms"));
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.idempotency.store-attempts=0")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("storeAttempts must be 1 to 10"));
        runner.withPropertyValues("cerberus.engines=nosuch://x")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void theClientIsClosedWithTheContextAndItsLocksAreFreed() throws Exception {
        String engine = "file:" + directory;
        try (Cerberus other = Cerberus.connect(engine)) {
            runner.withPropertyValues("cerberus.engines=" + engine).run(context -> {
                Lease lease = context.getBean(Cerberus.class).lock("report").acquire(Duration.ZERO);
                assertThat(lease.isValid()).isTrue();
                assertThat(other.lock("report").tryAcquire(Duration.ZERO)).isEmpty();
            });
            assertThat(other.lock("report").tryAcquire(Duration.ZERO)).hasValueSatisfying(Lease::close);
        }
    }

    @Test
    void anApplicationsOwnClientAndOptionsAreUsed() {
        runner.withUserConfiguration(OwnClient.class).run(context -> {
            assertThat(context).hasSingleBean(Cerberus.class);
            assertThat(context.getBean(Cerberus.class).namespace()).isEqualTo("own");
            assertThat(context.getBean(IdempotencyOptions.class).storeAttempts())
                    .isEqualTo(1);
            IdempotencyGuard guard = context.getBean(IdempotencyGuard.class);
            assertThat(guard.execute(IdempotencyKey.ofContent("op", 1), Duration.ofMinutes(1), () -> "first")
                            .value())
                    .isEqualTo("first");
            assertThat(guard.execute(IdempotencyKey.ofContent("op", 1), Duration.ofMinutes(1), () -> "second")
                            .value())
                    .isEqualTo("first");
        });
    }

    @Test
    void customizersAndSwitchListenersAreApplied() {
        runner.withUserConfiguration(CustomizerAndListener.class)
                .withPropertyValues("cerberus.engines=mem:")
                .run(context -> {
                    Cerberus cerberus = context.getBean(Cerberus.class);
                    assertThat(cerberus.engines()).containsExactly("mem", "backup");
                    cerberus.switchEngine();
                    assertThat(context.getBean(CustomizerAndListener.class).switches)
                            .singleElement()
                            .satisfies(event -> assertThat(event.toString()).contains("backup"));
                });
    }

    @Test
    void jdbcDataSourceUsesTheApplicationsDataSource() {
        runner.withUserConfiguration(H2DataSource.class)
                .withPropertyValues("cerberus.engines=jdbc:datasource?cerberus.table=starter_locks")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Cerberus cerberus = context.getBean(Cerberus.class);
                    assertThat(cerberus.engines()).containsExactly("jdbc");
                    DataSource dataSource = context.getBean(DataSource.class);
                    DistributedLockHold hold = DistributedLockHold.take(cerberus, "db");
                    assertThat(rowsIn(dataSource))
                            .as("the hold's row, in the application's database")
                            .isEqualTo(1);
                    hold.release();
                    assertThat(rowsIn(dataSource))
                            .as("a release deletes the row")
                            .isZero();
                });
    }

    private static int rowsIn(DataSource dataSource) throws SQLException {
        try (var connection = dataSource.getConnection();
                var rows = connection.createStatement().executeQuery("SELECT COUNT(*) FROM starter_locks")) {
            assertThat(rows.next()).isTrue();
            return rows.getInt(1);
        }
    }

    @Test
    void jdbcDataSourceWithoutADataSourceFailsTheStartSayingWhy() {
        runner.withPropertyValues("cerberus.engines=jdbc:datasource")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining(
                                "jdbc:datasource uses the application's DataSource, but the context has none"));
    }

    @Test
    void theStartersOwnMessagesShowTheUriRedacted() {
        runner.withPropertyValues("cerberus.engines=jdbc:datasource?cerberus.table=t&pasword=hunter2pw")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("jdbc:datasource?cerberus.table=t&pasword=****")
                        .hasMessageNotContaining("hunter2pw"));
        runner.withPropertyValues("cerberus.engines=zk://curator/locks?user=a&password=hunter2pw")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("zk://curator/locks?user=a&password=****")
                        .hasMessageNotContaining("hunter2pw"));
    }

    @Test
    void zkCuratorWithoutACuratorFrameworkFailsTheStartSayingWhy() {
        runner.withPropertyValues("cerberus.engines=zk://curator/locks")
                .run(
                        context -> assertThat(context.getStartupFailure())
                                .rootCause()
                                .hasMessageContaining(
                                        "zk://curator/locks uses the application's CuratorFramework, but the context has none"));
    }

    @Test
    void curatorUrisAreRecognised() {
        assertThat(CerberusAutoConfiguration.isCuratorUri("zk://curator")).isTrue();
        assertThat(CerberusAutoConfiguration.isCuratorUri("zk://curator/apps/locks?x=1"))
                .isTrue();
        assertThat(CerberusAutoConfiguration.isCuratorUri("zk://curator-host:2181/locks"))
                .isFalse();
        assertThat(CerberusAutoConfiguration.isCuratorUri("zk://zk1:2181")).isFalse();
    }

    @Test
    void everyPropertyIsDescribedForIdes() throws Exception {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the configuration processor ran").isNotNull();
            metadata = new ObjectMapper().readTree(in);
        }
        List<String> names = new CopyOnWriteArrayList<>();
        metadata.get("properties").forEach(property -> {
            names.add(property.get("name").asText());
            assertThat(property.path("description").asText())
                    .as(property.get("name").asText())
                    .isNotBlank();
        });
        assertThat(names)
                .contains(
                        "cerberus.engines",
                        "cerberus.namespace",
                        "cerberus.default-lease",
                        "cerberus.connect-timeout",
                        "cerberus.failover.enabled",
                        "cerberus.failover.after",
                        "cerberus.failover.check-every",
                        "cerberus.failover.fail-back-after",
                        "cerberus.idempotency.lease",
                        "cerberus.idempotency.wait-when-in-progress",
                        "cerberus.idempotency.fail-open",
                        "cerberus.idempotency.store-attempts");
    }

    /** A thread-bound hold taken and released on one thread, with its lease time. */
    private record DistributedLockHold(io.cerberus.DistributedLock lock, Duration lease) {
        static DistributedLockHold take(Cerberus cerberus, String name) {
            io.cerberus.DistributedLock lock = cerberus.lock(name);
            assertThat(lock.tryLock()).isTrue();
            return new DistributedLockHold(lock, lock.lease().leaseTime());
        }

        void release() {
            lock.unlock();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean(destroyMethod = "close")
        Cerberus ownCerberus() {
            return Cerberus.builder().engine("mem:own").namespace("own").build();
        }

        @Bean
        IdempotencyOptions ownOptions() {
            return IdempotencyOptions.defaults().withStoreAttempts(1);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomizerAndListener {
        final List<EngineSwitchEvent> switches = new CopyOnWriteArrayList<>();

        @Bean
        CerberusBuilderCustomizer backupEngine() {
            return builder -> builder.engine("backup", "mem:backup");
        }

        @Bean
        EngineSwitchListener recordSwitches() {
            return switches::add;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class H2DataSource {
        @Bean
        DataSource dataSource() {
            JdbcDataSource dataSource = new JdbcDataSource();
            dataSource.setURL("jdbc:h2:mem:starter;DB_CLOSE_DELAY=-1");
            return dataSource;
        }
    }
}
