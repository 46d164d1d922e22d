package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Fence;
import io.cerberus.fencing.FencedRows;
import io.cerberus.fencing.StaleFenceException;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link FencedRowsTemplate} on H2 in memory under Spring's transaction management: its statements
 * run in the current transaction, so a rollback undoes the fence it advanced with the rest; a stale
 * fence's exception rolls back the transaction it is thrown through; without a transaction each call
 * stands alone; the database's errors are Spring's.
 */
class FencedRowsTemplateTest {
    private EmbeddedDatabase database;
    private JdbcTemplate jdbc;
    private TransactionTemplate transaction;
    private FencedRowsTemplate accounts;

    @BeforeEach
    void database() {
        database = new EmbeddedDatabaseBuilder()
                .setType(EmbeddedDatabaseType.H2)
                .setName("fenced-" + UUID.randomUUID())
                .build();
        jdbc = new JdbcTemplate(database);
        jdbc.execute("CREATE TABLE accounts (id VARCHAR(40) PRIMARY KEY, balance BIGINT NOT NULL)");
        jdbc.execute("ALTER TABLE accounts ADD (fence_epoch BIGINT NOT NULL DEFAULT 0,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        jdbc.execute("CREATE TABLE journal (entry VARCHAR(80))");
        jdbc.update("INSERT INTO accounts (id, balance) VALUES ('a', 10)");
        transaction = new TransactionTemplate(new DataSourceTransactionManager(database));
        accounts = new FencedRowsTemplate(database, FencedRows.of("accounts", "id"));
    }

    @AfterEach
    void shutDown() {
        database.shutdown();
    }

    @Test
    void aRolledBackTransactionUndoesTheFenceItAdvanced() {
        transaction.executeWithoutResult(status -> {
            long balance = accounts.read(new Fence(0, 5), "a", "balance", row -> row.getLong(1))
                    .orElseThrow();
            assertThat(accounts.update(new Fence(0, 5), "a", "balance = ?", balance + 1))
                    .isTrue();
            assertThat(accounts.newestFence("a")).as("within the transaction").contains(new Fence(0, 5));
            status.setRollbackOnly();
        });
        assertThat(accounts.newestFence("a")).contains(new Fence(0, 0));
        assertThat(balance()).isEqualTo(10);
    }

    @Test
    void aCommittedTransactionKeepsTheFenceAndAnOlderOneIsRefusedAfterwards() {
        transaction.executeWithoutResult(status -> accounts.update(new Fence(0, 5), "a", "balance = ?", 20));
        assertThat(accounts.newestFence("a")).contains(new Fence(0, 5));

        assertThatThrownBy(() -> accounts.update(new Fence(0, 4), "a", "balance = ?", 30))
                .isInstanceOfSatisfying(
                        StaleFenceException.class,
                        stale -> assertThat(stale.newest()).isEqualTo(new Fence(0, 5)));
        assertThat(balance()).isEqualTo(20);
    }

    @Test
    void aStaleFenceRollsBackTheTransactionItIsThrownThrough() {
        accounts.update(new Fence(0, 9), "a", "balance = ?", 20);
        assertThatThrownBy(() -> transaction.executeWithoutResult(status -> {
                    jdbc.update("INSERT INTO journal (entry) VALUES ('paid out 5')");
                    accounts.update(new Fence(0, 8), "a", "balance = balance - ?", 5);
                }))
                .isInstanceOf(StaleFenceException.class);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM journal", Integer.class))
                .as("the journal entry of the stale holder")
                .isZero();
        assertThat(balance()).isEqualTo(20);
    }

    @Test
    void withoutATransactionEachCallStandsAloneAndMissingRowsAreTold() {
        assertThat(accounts.read(new Fence(0, 3), "a", "balance", row -> row.getLong(1)))
                .contains(10L);
        assertThat(accounts.newestFence("a")).contains(new Fence(0, 3));
        accounts.insert(new Fence(0, 3), "b", "balance", 1);
        assertThat(accounts.delete(new Fence(0, 3), "b")).isTrue();
        assertThat(accounts.delete(new Fence(0, 3), "b")).isFalse();
        assertThat(accounts.update(new Fence(0, 3), "b", "balance = ?", 1)).isFalse();
    }

    @Test
    void theDatabasesErrorsAreSpringsDataAccessExceptions() {
        assertThatThrownBy(() -> accounts.insert(new Fence(0, 1), "a", "balance", 1))
                .isInstanceOf(DuplicateKeyException.class);
    }

    private long balance() {
        return jdbc.queryForObject("SELECT balance FROM accounts WHERE id = 'a'", Long.class);
    }
}
