package io.cerberus.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Fence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The names {@link FencedRows} puts into SQL text are plain identifiers or refused, and the statements
 * it builds check and advance the fence as the class says. The statements against real databases:
 * {@code FencedRowsDatabaseTest} in cerberus-jdbc.
 */
class FencedRowsTest {

    @ParameterizedTest
    @ValueSource(strings = {"", "1accounts", "accounts; DROP TABLE x", "acc-ounts", "\"accounts\"", "a.b.c", "é"})
    void aTableThatIsNotAPlainIdentifierIsRefusedNamingTheRule(String table) {
        assertThatThrownBy(() -> FencedRows.of(table, "id"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table name must be a plain SQL identifier (optionally schema.table)")
                .hasMessageContaining("letters, digits and underscores, not starting with a digit, at most 63");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "id = 1 OR 1",
                "id--",
                "x234567890123456789012345678901234567890123456789012345678901234",
                " id",
                "s.id"
            })
    void aColumnThatIsNotAPlainIdentifierIsRefusedNamingTheRule(String column) {
        assertThatThrownBy(() -> FencedRows.of("accounts", column))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key column must be a plain SQL identifier: letters, digits and underscores");
        assertThatThrownBy(() -> FencedRows.of("accounts", "id").withFenceColumns(column, "fence_token"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence epoch column must be a plain SQL identifier");
        assertThatThrownBy(() -> FencedRows.of("accounts", "id").withFenceColumns("fence_epoch", column))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence token column must be a plain SQL identifier");
    }

    @Test
    void nullNamesAndOneColumnForTwoPartsAreRefused() {
        assertThatThrownBy(() -> FencedRows.of(null, "id"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("was null");
        assertThatThrownBy(() -> FencedRows.of("accounts", "id").withFenceColumns("fence", "FENCE"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the key column and the two fence columns must be three different columns,"
                        + " were id, fence and FENCE");
    }

    @Test
    void schemaQualifiedTablesAndLongestNamesAreAccepted() {
        RowStatements sql = new RowStatements("app.accounts", "id", "fe", "f" + "t".repeat(62));
        assertThat(sql.delete()).startsWith("DELETE FROM app.accounts WHERE id = ?");
    }

    @Test
    void anUpdateChecksAndAdvancesTheFenceInOneStatement() {
        RowStatements sql = new RowStatements("accounts", "id", "fence_epoch", "fence_token");
        assertThat(sql.update("balance = ?"))
                .isEqualTo("UPDATE accounts SET balance = ?, fence_epoch = ?, fence_token = ? WHERE id = ? AND"
                        + " (fence_epoch < ? OR (fence_epoch = ? AND fence_token <= ?))");
        assertThat(sql.advanceReturning("balance"))
                .isEqualTo("UPDATE accounts SET fence_epoch = ?, fence_token = ? WHERE id = ? AND"
                        + " (fence_epoch < ? OR (fence_epoch = ? AND fence_token <= ?)) RETURNING balance");
        assertThat(sql.insert("owner, balance", 2))
                .isEqualTo(
                        "INSERT INTO accounts (id, owner, balance, fence_epoch, fence_token) VALUES (?, ?, ?, ?, ?)");
        assertThat(sql.insert("", 0)).isEqualTo("INSERT INTO accounts (id, fence_epoch, fence_token) VALUES (?, ?, ?)");
    }

    @Test
    void blankClausesAreRefusedBeforeAnyStatement() {
        FencedRows rows = FencedRows.of("accounts", "id");
        assertThatThrownBy(() -> rows.update(null, new Fence(0, 1), "a", " "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the set clause must not be empty");
        assertThatThrownBy(() -> rows.read(null, new Fence(0, 1), "a", "", row -> 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the list of columns must not be empty");
    }

    @Test
    void aStaleFenceExceptionNamesBothFencesAndTheRow() {
        StaleFenceException stale = new StaleFenceException("accounts id='a'", new Fence(0, 5), new Fence(1, 2));
        assertThat(stale.refused()).isEqualTo(new Fence(0, 5));
        assertThat(stale.newest()).isEqualTo(new Fence(1, 2));
        assertThat(stale)
                .hasMessageStartingWith("stale fence 0:5 refused by accounts id='a', which has seen fence 1:2");
    }
}
