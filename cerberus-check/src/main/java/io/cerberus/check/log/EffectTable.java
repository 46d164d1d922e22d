package io.cerberus.check.log;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The effect of {@code cerberus check --idempotency --effect table}: a row of {@value #TABLE}, in the database of
 * the jdbc: engine, inserted in the operation's transaction ({@code table}: with the guard's record;
 * {@code table-apart}: committed on its own, the record after it). A committed row is an effect applied, what the
 * {@link EffectLedger} file is to the other runs; the judge reads them in the order of their ids.
 */
public final class EffectTable {
    /** The table of the effects. */
    public static final String TABLE = "cerberus_check_effects";

    private EffectTable() {}

    /**
     * Creates the table if it is missing, and empties it.
     *
     * @param url the driver's URL (no {@code cerberus.*} parameters)
     * @throws SQLException as the database reports a failure
     */
    public static void reset(String url) throws SQLException {
        try (Connection connection = DriverManager.getConnection(JdbcUrls.withTimeouts(url));
                Statement statement = connection.createStatement()) {
            String id = url.startsWith("jdbc:postgresql:")
                    ? "BIGSERIAL PRIMARY KEY"
                    : url.startsWith("jdbc:h2:")
                            ? "BIGINT AUTO_INCREMENT PRIMARY KEY"
                            : "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY";
            statement.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id " + id + ", op_key BIGINT NOT NULL,"
                    + " submission VARCHAR(100) NOT NULL, client VARCHAR(40) NOT NULL, payload VARCHAR(10) NOT NULL,"
                    + " nanos BIGINT NOT NULL)");
            statement.execute("DELETE FROM " + TABLE);
        }
    }

    /** Inserts one effect on the caller's connection, in its transaction. */
    public static void insert(Connection connection, long key, String submission, String client, String payload)
            throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + TABLE + " (op_key, submission, client, payload, nanos) VALUES (?, ?, ?, ?, ?)")) {
            insert.setLong(1, key);
            insert.setString(2, submission);
            insert.setString(3, client);
            insert.setString(4, payload);
            insert.setLong(5, System.nanoTime());
            insert.executeUpdate();
        }
    }

    /**
     * @param url the driver's URL
     * @return the committed effects, in the order of their ids
     * @throws SQLException as the database reports a failure
     */
    public static List<EffectLedger.Effect> read(String url) throws SQLException {
        List<EffectLedger.Effect> effects = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(JdbcUrls.withTimeouts(url));
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(
                        "SELECT op_key, submission, client, payload, nanos FROM " + TABLE + " ORDER BY id")) {
            while (rows.next()) {
                effects.add(new EffectLedger.Effect(
                        rows.getLong(1), rows.getString(2), rows.getString(3), rows.getString(4), rows.getLong(5)));
            }
        }
        return effects;
    }
}
