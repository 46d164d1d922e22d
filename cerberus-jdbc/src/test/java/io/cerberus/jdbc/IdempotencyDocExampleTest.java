package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.JavaSources;
import io.cerberus.testkit.ReadmeExamples;
import io.cerberus.testkit.ServerExtension;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The example of docs/IDEMPOTENCY.md, "Exactly once with your data", as a reader copies it, run on a real PostgreSQL:
 * the payment row and the stored result commit together, and the same call again replays without a second row.
 */
class IdempotencyDocExampleTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    private static final String SECTION = "## Exactly once with your data";

    @Test
    void theExampleStoresItsResultWithItsRowAndReplaysIt() throws Exception {
        Path page = ReadmeExamples.readme().orElseThrow().resolveSibling("docs/IDEMPOTENCY.md");
        String text = Files.readString(page);
        assertThat(text).contains(SECTION);
        List<String> blocks = JavaSources.javaBlocks(text.substring(text.indexOf(SECTION)));
        Class<?> example = JavaSources.compile("docs.ExactlyOnce", frame(blocks.get(0)), "the example of " + SECTION);
        Method run = example.getMethod(
                "run", IdempotencyGuard.class, DataSource.class, String.class, String.class, String.class, long.class);
        try (Connection connection = DriverManager.getConnection(POSTGRES.uri());
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS payments (id VARCHAR(40) PRIMARY KEY, amount BIGINT)");
            statement.execute("DELETE FROM payments");
        }
        TestDataSource dataSource = new TestDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                return DriverManager.getConnection(POSTGRES.uri());
            }
        };
        try (Cerberus cerberus = Cerberus.builder()
                .engine(POSTGRES.uri())
                .namespace("doc-" + java.util.UUID.randomUUID())
                .build()) {
            IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());

            Outcome<?> first = (Outcome<?>) run.invoke(null, guard, dataSource, "key-1", "{\"amount\":5}", "p-1", 5L);
            Outcome<?> again = (Outcome<?>) run.invoke(null, guard, dataSource, "key-1", "{\"amount\":5}", "p-2", 5L);

            assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(again.value()).isEqualTo("p-1");
        }
        try (Connection connection = DriverManager.getConnection(POSTGRES.uri());
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT id FROM payments")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("p-1");
            assertThat(rows.next()).as("one payment").isFalse();
        }
    }

    private static String frame(String block) {
        return """
                package docs;

                import io.cerberus.idempotency.IdempotencyGuard;
                import io.cerberus.idempotency.IdempotencyKey;
                import io.cerberus.idempotency.Outcome;
                import io.cerberus.idempotency.ResultCodec;
                import java.sql.PreparedStatement;
                import java.time.Duration;
                import javax.sql.DataSource;

                public class ExactlyOnce {
                    public static Outcome<String> run(IdempotencyGuard guard, DataSource dataSource,
                            String idempotencyKeyHeader, String requestBody, String paymentId, long amount) throws Exception {
                """ + block + """
                        return receipt;
                    }
                }
                """;
    }
}
