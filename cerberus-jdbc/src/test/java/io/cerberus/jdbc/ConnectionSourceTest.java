package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

class ConnectionSourceTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @Test
    void theServerCancelsAStatementBeforeTheNetworkTimeoutGivesUpOnTheConnection() {
        assertThat(ConnectionSource.statementTimeout(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(750));
        assertThat(ConnectionSource.statementTimeout(Duration.ofSeconds(10)))
                .as("at most 1 s short")
                .isEqualTo(Duration.ofSeconds(9));
        assertThat(ConnectionSource.statementTimeout(Duration.ofMillis(2))).isEqualTo(Duration.ofMillis(1));
        assertThat(ConnectionSource.statementTimeout(Duration.ofMillis(1)))
                .as("never zero, which would mean no timeout")
                .isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void aStatementTheDriverTimesIsCancelledASecondBeforeTheConnectionIsGivenUpOn() throws Exception {
        Duration timeout = Duration.ofMillis(1500);
        ConnectionSource.FromDataSource applications = new ConnectionSource.FromDataSource(
                "the test database", timeout, new RecordingDataSource(POSTGRES.uri()));
        Connection borrowed = applications.borrow();
        assertThat(borrowed.getNetworkTimeout())
                .as("a query timeout of 2 s, then a second")
                .isEqualTo(3000);
        applications.giveBack(borrowed, false);

        JdbcTarget target = JdbcTarget.parse(POSTGRES.uri(), JdbcOptions.defaults());
        try (ConnectionSource builtIn = ConnectionSource.of(target, JdbcOptions.defaults(), timeout)) {
            Connection opened = builtIn.borrow();
            assertThat(opened.getNetworkTimeout())
                    .as("until the sessions are known to last")
                    .isEqualTo(3000);
            builtIn.giveBack(opened, false);
            builtIn.sessionsLast();
            Connection timedByTheServer = builtIn.borrow();
            assertThat(timedByTheServer).isSameAs(opened);
            assertThat(timedByTheServer.getNetworkTimeout()).isEqualTo(1500);
            try (java.sql.Statement statement = timedByTheServer.createStatement();
                    java.sql.ResultSet rows = statement.executeQuery("SHOW statement_timeout")) {
                rows.next();
                assertThat(rows.getString(1)).isEqualTo("1125ms");
            }
            builtIn.giveBack(timedByTheServer, false);
        }
    }

    @Test
    void anApplicationsPoolIsAskedOnTheCallersThreadWhileItsConnectionsWork() throws Exception {
        RecordingDataSource data = new RecordingDataSource(POSTGRES.uri());
        ConnectionSource.FromDataSource source =
                new ConnectionSource.FromDataSource("the test database", Duration.ofSeconds(1), data);
        try {
            source.giveBack(source.borrow(), false);
            assertThat(data.threads)
                    .as("the first borrow is timed on a connector thread")
                    .singleElement()
                    .asString()
                    .startsWith("cerberus-jdbc-connect");
            source.giveBack(source.borrow(), false);
            assertThat(data.threads.get(1))
                    .as("once a connection worked: no thread hand-off")
                    .isEqualTo(Thread.currentThread().getName());

            // a connection failed: the next borrow is timed again, and gives up at the timeout on a pool that hangs
            source.giveBack(source.borrow(), true);
            assertThat(source.guarded()).isTrue();
            data.hang = true;
            long start = System.nanoTime();
            assertThatThrownBy(source::borrow)
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("the test database")
                    .hasMessageContaining("within 1000ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(5000));
        } finally {
            data.hung.countDown();
        }
    }

    @Test
    void aThreadGetsBackTheConnectionItGaveBackLast() throws Exception {
        JdbcTarget target = JdbcTarget.parse(POSTGRES.uri(), JdbcOptions.defaults());
        try (ConnectionSource source = ConnectionSource.of(target, JdbcOptions.defaults(), Duration.ofSeconds(5))) {
            Connection mine = source.borrow();
            Connection[] theirs = new Connection[1];
            Thread borrower = new Thread(() -> {
                try {
                    theirs[0] = source.borrow();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            borrower.start();
            borrower.join();
            assertThat(theirs[0]).isNotNull().isNotSameAs(mine);
            source.giveBack(mine, false);
            // another thread gives the other connection back last: the first idle one for anybody else
            Thread giver = new Thread(() -> source.giveBack(theirs[0], false));
            giver.start();
            giver.join();
            Connection again = source.borrow();
            assertThat(again)
                    .as("this thread's own connection, so it keeps its database session")
                    .isSameAs(mine);
            source.giveBack(again, false);
        }
    }

    /** The driver's data source, recording which thread asks, and able to hang like a pool whose database went away. */
    private static final class RecordingDataSource extends TestDataSource {
        final List<String> threads = new CopyOnWriteArrayList<>();
        final CountDownLatch hung = new CountDownLatch(1);
        volatile boolean hang;
        private final PGSimpleDataSource driver = new PGSimpleDataSource();

        RecordingDataSource(String url) {
            driver.setUrl(url);
        }

        @Override
        public Connection getConnection() throws SQLException {
            threads.add(Thread.currentThread().getName());
            if (hang) {
                try {
                    hung.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted", e);
                }
            }
            return driver.getConnection();
        }
    }
}
