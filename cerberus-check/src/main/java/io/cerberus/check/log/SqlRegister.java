package io.cerberus.check.log;

import io.cerberus.Fence;
import io.cerberus.fencing.FencedRows;
import io.cerberus.fencing.StaleFenceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * A register in a row of {@value SqlRegisters#TABLE}, kept by {@link FencedRows}: a write is one fenced
 * {@code UPDATE} that sets the value and adds one to the count, a holder's read a fenced read.
 */
final class SqlRegister implements Register {
    private static final FencedRows ROWS = FencedRows.of(SqlRegisters.TABLE, "name");

    private final SqlRegisters store;
    private final String name;
    private final Fence constant;

    /** @param constant the fence every operation carries instead of the holder's (the negative control), or null */
    SqlRegister(SqlRegisters store, String name, Fence constant) {
        this.store = store;
        this.name = name;
        this.constant = constant;
    }

    @Override
    public State read() {
        return store.onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT reg_value, accepted FROM " + SqlRegisters.TABLE + " WHERE name = ?")) {
                select.setString(1, name);
                try (ResultSet row = select.executeQuery()) {
                    return row.next() ? new State(row.getLong(1), row.getLong(2)) : State.EMPTY;
                }
            }
        });
    }

    @Override
    public Optional<State> read(Fence fence) {
        return store.onConnection(connection -> {
            try {
                return Optional.of(ROWS.read(
                                connection,
                                effective(fence),
                                name,
                                "reg_value, accepted",
                                row -> new State(row.getLong(1), row.getLong(2)))
                        .orElse(State.EMPTY));
            } catch (StaleFenceException e) {
                return Optional.empty();
            }
        });
    }

    @Override
    public boolean write(long value, Fence fence) {
        return store.onConnection(connection -> {
            try {
                if (!ROWS.update(connection, effective(fence), name, "reg_value = ?, accepted = accepted + 1", value)) {
                    throw new IllegalStateException("the register row " + name + " is missing");
                }
                return true;
            } catch (StaleFenceException e) {
                return false;
            }
        });
    }

    /** Creates the register's row at value 0 with no fence, replacing any of an earlier run. */
    void reset(Connection connection) throws SQLException {
        try (PreparedStatement delete =
                connection.prepareStatement("DELETE FROM " + SqlRegisters.TABLE + " WHERE name = ?")) {
            delete.setString(1, name);
            delete.executeUpdate();
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + SqlRegisters.TABLE + " (name, reg_value, accepted) VALUES (?, 0, 0)")) {
            insert.setString(1, name);
            insert.executeUpdate();
        }
    }

    private Fence effective(Fence fence) {
        return constant == null ? fence : constant;
    }
}
