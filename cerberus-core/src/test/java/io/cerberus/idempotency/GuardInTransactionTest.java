package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The guard's completions in the caller's transaction ({@link IdempotencyGuard#executeInTransaction},
 * {@link IdempotencyAttempt#completeIn}, {@code failIn}, {@code completeNotKeptIn}) over a store that
 * completes on the caller's connection ({@link TransactionalStore}): what commits, what a rollback or a
 * failed commit frees, and what the caller is told when nothing could be written. The JDBC module runs
 * the same calls on real databases; these pin the guard's own part.
 */
class GuardInTransactionTest {
    private static final Duration HOUR = Duration.ofHours(1);
    private static final IdempotencyKey KEY = IdempotencyKey.ofContent("charge", "order-1");
    /** The key's record in the store: the guard's namespace, then the key's id. */
    private static final String ID = "ns/" + KEY.id();

    /** Runs {@link #KEY} in a transaction of {@code store}'s: the operation, counted in {@code runs}, returns "ran#N". */
    private static Outcome<String> runCounted(IdempotencyGuard guard, TransactionalStore store, AtomicInteger runs)
            throws Exception {
        return guard.executeInTransaction(
                KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> "ran#" + runs.incrementAndGet());
    }

    private static IdempotencyGuard guardOn(TransactionalStore store) {
        return new IdempotencyGuard(store, "ns", "test://transactional", IdempotencyOptions.defaults());
    }

    @Test
    void theResultCommitsWithTheEffectAndADuplicateReplaysIt() throws Exception {
        TransactionalStore store = new TransactionalStore();
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store)) {
            AtomicReference<Boolean> autoCommitInside = new AtomicReference<>();
            Outcome<String> first =
                    guard.executeInTransaction(KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> {
                        autoCommitInside.set(connection.getAutoCommit());
                        assertThat(store.inner.read(ID))
                                .as("not completed before the commit")
                                .hasValueSatisfying(
                                        record -> assertThat(record.completed()).isFalse());
                        return "charged#" + runs.incrementAndGet();
                    });
            assertThat(first).isEqualTo(new Outcome<>("charged#1", Outcome.Status.EXECUTED));
            assertThat(autoCommitInside.get())
                    .as("the operation runs in a transaction")
                    .isFalse();
            assertThat(store.commits).hasValue(1);
            assertThat(store.opened()).singleElement().satisfies(tx -> {
                assertThat(tx.autoCommit).as("auto-commit set back").isTrue();
                assertThat(tx.closed).as("the connection closed").isTrue();
            });

            Outcome<String> again = guard.executeInTransaction(
                    KEY,
                    HOUR,
                    ResultCodec.STRING,
                    store.dataSource(),
                    connection -> "charged#" + runs.incrementAndGet());
            assertThat(again).isEqualTo(new Outcome<>("charged#1", Outcome.Status.REPLAYED));
            assertThat(runs).hasValue(1);
            assertThat(store.opened()).as("a replay opens no connection").hasSize(1);
        }
    }

    @Test
    void aConnectionAlreadyInATransactionIsLeftInOne() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            DataSource inTransaction = (DataSource) Proxy.newProxyInstance(
                    getClass().getClassLoader(),
                    new Class<?>[] {DataSource.class},
                    (proxy, method, args) -> store.transaction());
            guard.executeInTransaction(KEY, HOUR, ResultCodec.STRING, inTransaction, connection -> "done");
            assertThat(store.opened())
                    .singleElement()
                    .satisfies(tx -> assertThat(tx.autoCommit).isFalse());
        }
    }

    @Test
    void anOperationThatThrowsIsRolledBackAndItsKeyFreedForARetry() throws Exception {
        TransactionalStore store = new TransactionalStore();
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store)) {
            assertThatThrownBy(() -> guard.executeInTransaction(
                            KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> {
                                runs.incrementAndGet();
                                throw new IllegalStateException("declined");
                            }))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("declined");
            assertThat(store.rollbacks).hasValue(1);
            assertThat(store.commits).hasValue(0);
            assertThat(store.inner.read(ID)).as("the key freed at once").isEmpty();

            Outcome<String> retry = runCounted(guard, store, runs);
            assertThat(retry).isEqualTo(new Outcome<>("ran#2", Outcome.Status.EXECUTED));
        }
    }

    @Test
    void aRememberedFailureOfTheOperationIsReplayedAndARollbackThatFailsTooIsAddedToIt() throws Exception {
        TransactionalStore store = new TransactionalStore();
        store.failNextRollback.set(new SQLException("connection reset"));
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = new IdempotencyGuard(
                store,
                "ns",
                "test://transactional",
                IdempotencyOptions.defaults().remembering(List.of(IllegalStateException.class)))) {
            assertThatThrownBy(() -> guard.executeInTransaction(
                            KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> {
                                runs.incrementAndGet();
                                throw new IllegalStateException("card declined");
                            }))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("card declined")
                    .satisfies(thrown -> assertThat(thrown.getSuppressed())
                            .as("the rollback's own failure")
                            .singleElement()
                            .satisfies(rollback -> assertThat(rollback).hasMessage("connection reset")));
            assertThatThrownBy(() -> runCounted(guard, store, runs))
                    .as("a remembered failure is replayed, not run again")
                    .isInstanceOf(ReplayedFailureException.class)
                    .hasMessageContaining("card declined");
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void anAttemptIsSettledOnceAndAReplayedOneNever() throws Exception {
        TransactionalStore store = new TransactionalStore();
        Map<String, SettlingCall> calls = new LinkedHashMap<>();
        calls.put("complete", attempt -> attempt.complete("done"));
        calls.put("completeIn", attempt -> attempt.completeIn(store.transaction(), "done"));
        calls.put("completeNotKept", attempt -> attempt.completeNotKept("too large"));
        calls.put("completeNotKeptIn", attempt -> attempt.completeNotKeptIn(store.transaction(), "too large"));
        calls.put("fail", attempt -> attempt.fail(new IllegalStateException("declined")));
        calls.put("failIn", attempt -> attempt.failIn(store.transaction(), new IllegalStateException("declined")));
        try (IdempotencyGuard guard = guardOn(store)) {
            for (Map.Entry<String, SettlingCall> first : calls.entrySet()) {
                IdempotencyKey key = IdempotencyKey.ofContent("settle", first.getKey());
                IdempotencyAttempt<String> attempt = guard.begin(key, HOUR, ResultCodec.STRING);
                assertThat(attempt.status()).isEqualTo(Outcome.Status.EXECUTED);
                first.getValue().settle(attempt);
                for (Map.Entry<String, SettlingCall> second : calls.entrySet()) {
                    assertThatThrownBy(() -> second.getValue().settle(attempt))
                            .as("%s after %s", second.getKey(), first.getKey())
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageEndingWith("an attempt twice: it was already completed or failed");
                }
            }
            guard.execute(KEY, HOUR, ResultCodec.STRING, () -> "first");
            IdempotencyAttempt<String> replayed = guard.begin(KEY, HOUR, ResultCodec.STRING);
            assertThat(replayed.replayed()).isEqualTo("first");
            assertThat(replayed.status()).isEqualTo(Outcome.Status.REPLAYED);
            for (Map.Entry<String, SettlingCall> call : calls.entrySet()) {
                assertThatThrownBy(() -> call.getValue().settle(replayed))
                        .as(call.getKey())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageEndingWith("a replayed attempt: the operation must not run");
            }
        }
    }

    /** One of the calls that settle an attempt. */
    private interface SettlingCall {
        void settle(IdempotencyAttempt<String> attempt) throws Exception;
    }

    @Test
    void aCommitThatFailsFreesTheKeyAndPassesTheFailureOn() throws Exception {
        TransactionalStore store = new TransactionalStore();
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store)) {
            SQLException lost = new SQLException("connection reset during commit");
            store.failNextCommit.set(lost);
            assertThatThrownBy(() -> runCounted(guard, store, runs)).isSameAs(lost);
            assertThat(store.rollbacks).hasValue(1);
            assertThat(store.inner.read(ID)).isEmpty();
            assertThat(runCounted(guard, store, runs).value()).isEqualTo("ran#2");
        }
    }

    @Test
    void aKeyTakenOverWhileTheOperationRanStoresNothingAndSaysTheLeaseRanOut() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            assertThatThrownBy(() -> guard.executeInTransaction(
                            KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> {
                                // the lease ran out and another attempt claimed the key meanwhile
                                String mine = store.inner.read(ID).orElseThrow().token();
                                assertThat(store.inner.release(ID, mine)).isTrue();
                                assertThat(store.inner.claim(ID, "fp", "other", HOUR))
                                        .isEmpty();
                                return "late";
                            }))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("another attempt took the key")
                    .hasMessageContaining("roll the transaction back");
            assertThat(store.rollbacks).hasValue(1);
            assertThat(store.inner.read(ID))
                    .as("the other attempt's claim is left alone")
                    .hasValueSatisfying(record -> {
                        assertThat(record.token()).isEqualTo("other");
                        assertThat(record.completed()).isFalse();
                    });
        }
    }

    @Test
    void aConnectionThatCannotSeeTheClaimIsToldApartFromATakeOver() throws Exception {
        TransactionalStore store = new TransactionalStore();
        store.blind = true;
        try (IdempotencyGuard guard = guardOn(store)) {
            assertThatThrownBy(() -> guard.executeInTransaction(
                            KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> "ran"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("the connection is not to the store's database")
                    .hasMessageContaining("REPEATABLE READ");
            assertThat(store.inner.read(ID))
                    .as("the claim freed with the rollback")
                    .isEmpty();
        }
    }

    @Test
    void aFailureWrittenInTheTransactionIsReplayedOnceItCommits() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            Connection connection = store.transaction();
            try (IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
                assertThat(attempt.mustRun()).isTrue();
                attempt.failIn(connection, new IllegalArgumentException("card declined"));
                assertThat(store.inner.read(ID).orElseThrow().completed())
                        .as("not before the commit")
                        .isFalse();
                connection.commit();
            }
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "again"))
                    .isInstanceOf(ReplayedFailureException.class)
                    .hasMessageContaining("card declined");
        }
    }

    @Test
    void aFailureWrittenInATransactionThatRollsBackFreesTheKey() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            Connection connection = store.transaction();
            try (IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
                attempt.failIn(connection, new IllegalArgumentException("card declined"));
                connection.rollback();
                attempt.rolledBack();
            }
            assertThat(guard.execute(KEY, HOUR, () -> "ran").status()).isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void rolledBackAfterACommittedCompletionKeepsIt() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            Connection connection = store.transaction();
            try (IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
                assertThat(attempt.completeIn(connection, "charged"))
                        .isEqualTo(new Outcome<>("charged", Outcome.Status.EXECUTED));
                connection.commit();
                attempt.rolledBack(); // a commit whose answer was lost: in doubt, the caller says so
            }
            assertThat(guard.execute(KEY, HOUR, () -> "again"))
                    .isEqualTo(new Outcome<>("charged", Outcome.Status.REPLAYED));
        }
    }

    @Test
    void aResultNotKeptIsWrittenInTheTransactionAndToldToDuplicates() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store)) {
            Connection connection = store.transaction();
            try (IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
                attempt.completeNotKeptIn(connection, "the report is streamed");
                connection.commit();
            }
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "again"))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("the report is streamed");
        }
    }

    @Test
    void aResultLargerThanTheStoreKeepsIsWrittenAsNotKept() throws Exception {
        TransactionalStore store = new TransactionalStore() {
            @Override
            public int maxResultBytes() {
                return 16;
            }
        };
        try (IdempotencyGuard guard = guardOn(store)) {
            Outcome<String> first = guard.executeInTransaction(
                    KEY, HOUR, ResultCodec.STRING, store.dataSource(), connection -> "x".repeat(17));
            assertThat(first).isEqualTo(new Outcome<>("x".repeat(17), Outcome.Status.EXECUTED));
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "again"))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("17 bytes");
        }
    }

    @Test
    void aResultTheCodecCannotEncodeRollsBackAndStoresNothing() throws Exception {
        TransactionalStore store = new TransactionalStore();
        ResultCodec<String> failing = new ResultCodec<>() {
            @Override
            public byte[] encode(String value) {
                throw new IllegalArgumentException("not encodable");
            }

            @Override
            public String decode(byte[] bytes) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
        try (IdempotencyGuard guard = guardOn(store)) {
            assertThatThrownBy(() ->
                            guard.executeInTransaction(KEY, HOUR, failing, store.dataSource(), connection -> "ran"))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("could not be encoded (not encodable)")
                    .hasMessageContaining("roll the transaction back");
            assertThat(store.rollbacks).hasValue(1);
            assertThat(store.inner.read(ID)).as("the key freed").isEmpty();
        }
    }

    @Test
    void theCallsRefuseANullConnectionAndAnEmptyReason() throws Exception {
        TransactionalStore store = new TransactionalStore();
        try (IdempotencyGuard guard = guardOn(store);
                IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
            Connection connection = store.connection();
            assertThatThrownBy(() -> attempt.completeIn(null, "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the connection must not be null");
            assertThatThrownBy(() -> attempt.failIn(connection, null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the error must not be null");
            assertThatThrownBy(() -> attempt.completeNotKeptIn(connection, ""))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the reason must not be empty");
            assertThat(attempt.mustRun())
                    .as("nothing settled by the refused calls")
                    .isTrue();
        }
    }
}
