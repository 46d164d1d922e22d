package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.fencing.FencedRows;
import io.cerberus.fencing.StaleFenceException;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link FencedRows} in a Spring application: the same statements, run on the connection of the
 * current Spring transaction when there is one (as {@link JdbcTemplate} takes it, through
 * {@code DataSourceUtils}), so a fence advanced in a transaction that rolls back is undone with the rest
 * of it; without a transaction, each call is on its own (a fenced read then commits its own). A
 * refusal is a {@link StaleFenceException}, a runtime exception: by Spring's default rules it rolls
 * back the caller's {@code @Transactional} method. The database's errors come as Spring's
 * {@link DataAccessException}s. Needs spring-jdbc, which the starter does not bring. Thread-safe.
 *
 * <pre>{@code
 * @Bean FencedRowsTemplate accounts(DataSource dataSource) {
 *     return new FencedRowsTemplate(dataSource, FencedRows.of("accounts", "id"));
 * }
 * }</pre>
 */
public class FencedRowsTemplate {
    private final JdbcTemplate jdbc;
    private final FencedRows rows;

    /**
     * @param dataSource the application's data source (the one its transaction manager uses)
     * @param rows the table, key column and fence columns
     */
    public FencedRowsTemplate(DataSource dataSource, FencedRows rows) {
        this.jdbc = new JdbcTemplate(Objects.requireNonNull(dataSource, "dataSource"));
        this.rows = Objects.requireNonNull(rows, "rows");
    }

    /**
     * @see FencedRows#update
     * @param fence the writer's fence
     * @param key the row's key
     * @param set the changes, as after SET, not naming the fence columns
     * @param values the set clause's parameters, in order
     * @return true if the row was changed, false if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was changed
     * @throws DataAccessException as the database reports a failure
     */
    public boolean update(Fence fence, Object key, String set, Object... values) {
        return run(connection -> rows.update(connection, fence, key, set, values));
    }

    /**
     * @see FencedRows#insert
     * @param fence the writer's fence
     * @param key the new row's key
     * @param columns the other columns given, comma-separated, or empty
     * @param values their values, in order
     * @throws DataAccessException as the database reports a failure (a duplicate key included)
     */
    public void insert(Fence fence, Object key, String columns, Object... values) {
        run(connection -> {
            rows.insert(connection, fence, key, columns, values);
            return null;
        });
    }

    /**
     * @see FencedRows#delete
     * @param fence the writer's fence
     * @param key the row's key
     * @return true if the row was deleted, false if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was deleted
     * @throws DataAccessException as the database reports a failure
     */
    public boolean delete(Fence fence, Object key) {
        return run(connection -> rows.delete(connection, fence, key));
    }

    /**
     * @see FencedRows#read
     * @param fence the reader's fence
     * @param key the row's key
     * @param columns the columns to read, as after SELECT
     * @param reader what to make of the row; must not give null
     * @param <T> what it makes
     * @return what the reader made of the row, or empty if there is no row with that key
     * @throws StaleFenceException if the row has seen a newer fence; nothing was read
     * @throws DataAccessException as the database reports a failure
     */
    public <T> Optional<T> read(Fence fence, Object key, String columns, FencedRows.RowReader<T> reader) {
        return run(connection -> rows.read(connection, fence, key, columns, reader));
    }

    /**
     * @param key the row's key
     * @return the newest fence the row has seen, or empty if there is no row with that key
     * @throws DataAccessException as the database reports a failure
     */
    public Optional<Fence> newestFence(Object key) {
        return run(connection -> rows.newestFence(connection, key));
    }

    private <T> T run(ConnectionCallback<T> statement) {
        return jdbc.execute(statement);
    }
}
