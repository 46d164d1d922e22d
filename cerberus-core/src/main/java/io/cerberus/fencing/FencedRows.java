package io.cerberus.fencing;

import io.cerberus.CerberusException;
import io.cerberus.Fence;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Fenced changes to the rows of one SQL table over plain JDBC: each row keeps the newest fence it has
 * seen in two BIGINT columns ({@code fence_epoch}, {@code fence_token} unless told otherwise), and a
 * change carrying an older fence is refused. An update or delete is one statement whose condition is
 * the fence check ({@code WHERE key = ? AND (fence_epoch < ? OR (fence_epoch = ? AND fence_token <= ?))})
 * and which advances the row's fence to the writer's in the same statement, so no other writer comes in
 * between; a fence equal to the row's passes (the same lease writing again).
 *
 * <p>A fenced {@link #read read} advances the row's fence too, before it returns what it reads: once a
 * newer holder has read a row, an older holder's write is refused; else the newer one would write from
 * a read that missed the older one's write (a lost update). On PostgreSQL it is one statement
 * ({@code UPDATE ... RETURNING}); elsewhere (MariaDB/MySQL, H2) the update, then a select, in one
 * transaction: the caller's, or one of its own when the connection is in auto-commit mode.
 *
 * <p>A refusal is a {@link StaleFenceException}, not a return value: a stale holder that carries on is
 * the failure fencing exists to stop, and an exception is what rolls a transaction back (Spring's rule).
 * A missing row is no one's fault: {@code false} or empty, as a plain UPDATE's count of 0. Everything
 * runs on the caller's connection and transaction, which it never commits, rolls back or closes (only
 * the transaction a read opens itself in auto-commit mode).
 * Values are bind parameters; names are checked SQL identifiers; the clauses given (a set clause, a
 * list of columns) are SQL text, the programmer's, never input. The key column must be unique.
 * Immutable and thread-safe; a connection is used by one thread at a time, as JDBC wants.
 */
public final class FencedRows {
    /** The default column of the fence's epoch. */
    public static final String EPOCH_COLUMN = "fence_epoch";
    /** The default column of the fence's token. */
    public static final String TOKEN_COLUMN = "fence_token";

    private final RowStatements sql;

    private FencedRows(RowStatements sql) {
        this.sql = sql;
    }

    /**
     * @param table the table, optionally {@code schema.table}, as an unquoted SQL identifier
     * @param keyColumn the column that names a row: a primary key or unique
     * @return the fenced rows of that table, whose fence is in {@value #EPOCH_COLUMN} and {@value #TOKEN_COLUMN}
     * @throws IllegalArgumentException if a name is not a plain SQL identifier, naming the rule
     */
    public static FencedRows of(String table, String keyColumn) {
        return new FencedRows(new RowStatements(table, keyColumn, EPOCH_COLUMN, TOKEN_COLUMN));
    }

    /**
     * @param epochColumn the column of the fence's epoch (BIGINT NOT NULL DEFAULT 0)
     * @param tokenColumn the column of the fence's token (BIGINT NOT NULL DEFAULT 0)
     * @return the same rows with their fence in these columns
     * @throws IllegalArgumentException if a name is not a plain SQL identifier, or two columns are one
     */
    public FencedRows withFenceColumns(String epochColumn, String tokenColumn) {
        return new FencedRows(new RowStatements(sql.table(), sql.key(), epochColumn, tokenColumn));
    }

    /**
     * Changes a row unless it has seen a newer fence, and advances its fence to {@code fence}, in one
     * statement: {@code UPDATE table SET <set>, fence_epoch = ?, fence_token = ? WHERE <fence check>}.
     *
     * @param connection the caller's connection, in the caller's transaction
     * @param fence the writer's fence ({@link Fence#of(io.cerberus.Lease)})
     * @param key the row's key
     * @param set the changes, as after SET ({@code "balance = balance + ?"}), not naming the fence columns
     * @param values the set clause's parameters, in order
     * @return true if the row was changed, false if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was changed
     * @throws IllegalArgumentException if the set clause is blank
     * @throws IllegalStateException if the key matched several rows (the key column is not unique)
     * @throws SQLException as the database reports it
     */
    public boolean update(Connection connection, Fence fence, Object key, String set, Object... values)
            throws SQLException {
        requireFence(fence);
        requireClause(set, "set clause");
        try (PreparedStatement update = connection.prepareStatement(sql.update(set))) {
            int next = bind(update, 1, values);
            bindFenceAndKey(update, next, fence, key);
            return changed(connection, update.executeUpdate(), fence, key);
        }
    }

    /**
     * Inserts a row that starts with {@code fence}: {@code INSERT INTO table (key, <columns>, fence_epoch,
     * fence_token) VALUES (...)}. A row that exists already fails as the database fails a duplicate key;
     * a row deleted before is new again, whatever fence it had seen (see {@link #delete delete}).
     *
     * @param connection the caller's connection, in the caller's transaction
     * @param fence the writer's fence
     * @param key the new row's key
     * @param columns the other columns given, comma-separated ({@code "owner, balance"}), or empty
     * @param values their values, in order
     * @throws SQLException as the database reports it (a duplicate key included)
     */
    public void insert(Connection connection, Fence fence, Object key, String columns, Object... values)
            throws SQLException {
        requireFence(fence);
        Objects.requireNonNull(columns, "columns");
        try (PreparedStatement insert = connection.prepareStatement(sql.insert(columns, values.length))) {
            insert.setObject(1, key);
            int next = bind(insert, 2, values);
            insert.setLong(next, fence.epoch());
            insert.setLong(next + 1, fence.token());
            insert.executeUpdate();
        }
    }

    /**
     * Deletes a row unless it has seen a newer fence, in one statement. The row's fence goes with it:
     * where an older holder must not create the row again afterwards, mark it deleted with
     * {@link #update update} instead.
     *
     * @param connection the caller's connection, in the caller's transaction
     * @param fence the writer's fence
     * @param key the row's key
     * @return true if the row was deleted, false if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was deleted
     * @throws IllegalStateException if the key matched several rows (the key column is not unique)
     * @throws SQLException as the database reports it
     */
    public boolean delete(Connection connection, Fence fence, Object key) throws SQLException {
        requireFence(fence);
        try (PreparedStatement delete = connection.prepareStatement(sql.delete())) {
            delete.setObject(1, key);
            bindFenceCheck(delete, 2, fence);
            return changed(connection, delete.executeUpdate(), fence, key);
        }
    }

    /**
     * Reads a row as a holder: advances its fence to {@code fence} unless it has seen a newer one, then
     * reads {@code columns} of the row as it is after that (see the class comment for how each database
     * does it in one statement or one transaction).
     *
     * @param connection the caller's connection, in the caller's transaction or in auto-commit mode
     * @param fence the reader's fence
     * @param key the row's key
     * @param columns the columns to read, as after SELECT ({@code "owner, balance"})
     * @param reader what to make of the row (the result set is on it); must not give null
     * @param <T> what it makes
     * @return what the reader made of the row, or empty if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was read
     * @throws IllegalArgumentException if the list of columns is blank
     * @throws SQLException as the database reports it
     */
    public <T> Optional<T> read(Connection connection, Fence fence, Object key, String columns, RowReader<T> reader)
            throws SQLException {
        requireFence(fence);
        requireClause(columns, "list of columns");
        Objects.requireNonNull(reader, "reader");
        if (connection.getMetaData().getDatabaseProductName().equals("PostgreSQL")) {
            return readReturning(connection, fence, key, columns, reader);
        }
        if (!connection.getAutoCommit()) {
            return advanceThenSelect(connection, fence, key, columns, reader);
        }
        connection.setAutoCommit(false);
        try {
            Optional<T> read = advanceThenSelect(connection, fence, key, columns, reader);
            connection.commit();
            return read;
        } catch (SQLException | RuntimeException e) {
            rollback(connection, e);
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    /**
     * A {@link FenceKeeper} on this table: one row per resource, keyed by its name, with no other
     * column needed ({@code CREATE TABLE cerberus_fences (resource VARCHAR(512) PRIMARY KEY, fence_epoch
     * BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)}). Each admission is a
     * {@link #read fenced read} of the resource's row, on a connection of its own in auto-commit mode;
     * a resource seen for the first time gets its row (two first admissions racing: the loser reads
     * again).
     *
     * @param dataSource where the table is
     * @return the keeper
     */
    public FenceKeeper keeper(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return (resource, fence) -> {
            requireFence(fence);
            FenceKeeper.checkedResource(resource);
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                for (int attempt = 0; ; attempt++) {
                    if (read(connection, fence, resource, sql.key(), row -> Boolean.TRUE)
                            .isPresent()) {
                        return;
                    }
                    try {
                        insert(connection, fence, resource, "");
                        return;
                    } catch (SQLException e) {
                        if (attempt > 0
                                || e.getSQLState() == null
                                || !e.getSQLState().startsWith("23")) {
                            throw e;
                        }
                        // another admission inserted the row first: read it again
                    }
                }
            } catch (SQLException e) {
                throw new CerberusException(
                        "the fence keeper's table " + sql.table() + " failed: " + e.getMessage(), e);
            }
        };
    }

    /**
     * @param connection a connection
     * @param key the row's key
     * @return the newest fence the row has seen, or empty if there is no row with that key
     * @throws SQLException as the database reports it
     */
    public Optional<Fence> newestFence(Connection connection, Object key) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(sql.fence())) {
            select.setObject(1, key);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(new Fence(row.getLong(1), row.getLong(2))) : Optional.empty();
            }
        }
    }

    /**
     * What a {@link #read read} makes of the row.
     *
     * @param <T> what it makes
     */
    @FunctionalInterface
    public interface RowReader<T> {
        /**
         * @param row the result set, on the row read; not to be moved
         * @return what to return; not null
         * @throws SQLException as the driver reports it
         */
        T read(ResultSet row) throws SQLException;
    }

    private <T> Optional<T> readReturning(
            Connection connection, Fence fence, Object key, String columns, RowReader<T> reader) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(sql.advanceReturning(columns))) {
            bindFenceAndKey(update, 1, fence, key);
            try (ResultSet row = update.executeQuery()) {
                if (row.next()) {
                    return Optional.of(readRow(row, reader));
                }
            }
        }
        changed(connection, 0, fence, key);
        return Optional.empty();
    }

    /** The update holds the row's lock to the end of the transaction, so the select sees it as updated. */
    private <T> Optional<T> advanceThenSelect(
            Connection connection, Fence fence, Object key, String columns, RowReader<T> reader) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(sql.advance())) {
            bindFenceAndKey(update, 1, fence, key);
            if (!changed(connection, update.executeUpdate(), fence, key)) {
                return Optional.empty();
            }
        }
        try (PreparedStatement select = connection.prepareStatement(sql.select(columns))) {
            select.setObject(1, key);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(readRow(row, reader)) : Optional.empty();
            }
        }
    }

    private static <T> T readRow(ResultSet row, RowReader<T> reader) throws SQLException {
        return Objects.requireNonNull(reader.read(row), "the row reader gave null");
    }

    /**
     * Tells what a conditional statement's count means. For 0, the row's fence says why: no row, or a
     * newer fence; a fence not newer means the driver counts changed rows rather than matched ones
     * ({@code useAffectedRows=true} on MySQL/MariaDB) and the statement changed nothing that was not
     * so already: applied.
     */
    private boolean changed(Connection connection, int count, Fence fence, Object key) throws SQLException {
        if (count == 1) {
            return true;
        }
        if (count > 1) {
            throw new IllegalStateException("the key " + sql.row(key) + " matched " + count
                    + " rows: the key column must be unique (a primary key or a unique constraint);"
                    + " roll the transaction back");
        }
        Optional<Fence> newest = newestFence(connection, key);
        if (newest.isPresent() && fence.isOlderThan(newest.get())) {
            throw new StaleFenceException(sql.row(key), fence, newest.get());
        }
        return newest.isPresent();
    }

    private static void bindFenceAndKey(PreparedStatement statement, int first, Fence fence, Object key)
            throws SQLException {
        statement.setLong(first, fence.epoch());
        statement.setLong(first + 1, fence.token());
        statement.setObject(first + 2, key);
        bindFenceCheck(statement, first + 3, fence);
    }

    private static void bindFenceCheck(PreparedStatement statement, int first, Fence fence) throws SQLException {
        statement.setLong(first, fence.epoch());
        statement.setLong(first + 1, fence.epoch());
        statement.setLong(first + 2, fence.token());
    }

    /** @return the index after the last one bound */
    private static int bind(PreparedStatement statement, int first, Object... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            statement.setObject(first + i, values[i]);
        }
        return first + values.length;
    }

    private static void requireFence(Fence fence) {
        Objects.requireNonNull(fence, "fence");
    }

    private static void requireClause(String clause, String what) {
        if (clause == null || clause.isBlank()) {
            throw new IllegalArgumentException("the " + what + " must not be empty");
        }
    }

    private static void rollback(Connection connection, Exception failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
