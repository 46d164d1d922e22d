package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.idempotency.ReplayedFailureException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link Idempotent @Idempotent} over {@code @Transactional} methods with the records in the same H2
 * database ({@code jdbc:datasource}): every case of {@link IdempotentTransactionTest} holds as it does with
 * the records apart, and the result is written in the method's transaction: when that transaction rolls
 * back after the method returned (an outer transaction that fails later), the result goes with the
 * effect, the key is free at once, and a retry runs the method again, once.
 */
@SpringBootTest(classes = IdempotentTransactionTest.App.class, properties = "cerberus.engines=jdbc:datasource")
class IdempotentInTransactionTest extends IdempotentTransactionTest {
    @Autowired
    PlatformTransactionManager transactions;

    @Test
    void anOuterTransactionThatRollsBackTakesTheResultWithTheEffectAndTheRetryRunsOnce() {
        TransactionTemplate outer = new TransactionTemplate(transactions);
        String first = outer.execute(status -> {
            String booked = bookings.bookOrFail(seat, false);
            status.setRollbackOnly(); // something after the booking failed
            return booked;
        });
        assertThat(first).isEqualTo("booked " + seat);
        assertThat(rows()).as("rolled back with the outer transaction").isZero();

        assertThat(bookings.bookOrFail(seat, false))
                .as("run again, not replayed: the result was rolled back with the effect")
                .isEqualTo("booked " + seat);
        assertThat(rows()).isEqualTo(1);
        assertThat(bookings.runs()).hasValue(2);
        assertThat(bookings.bookOrFail(seat, false)).isEqualTo("booked " + seat);
        assertThat(bookings.runs()).as("the committed result is replayed").hasValue(2);
    }

    @Test
    void aFailureKeptByTheRollbackRulesIsStoredInTheTransactionAndGoesWithItsRollback() {
        TransactionTemplate outer = new TransactionTemplate(transactions);
        outer.executeWithoutResult(status -> {
            assertThatThrownBy(() -> bookings.bookKeepingOnFailure(seat)).isInstanceOf(IllegalStateException.class);
            status.setRollbackOnly(); // the caller's own transaction fails after the method
        });
        assertThat(rows())
                .as("the effect, rolled back with the outer transaction")
                .isZero();

        assertThatThrownBy(() -> bookings.bookKeepingOnFailure(seat))
                .as("run again, not replayed: the stored failure was rolled back with the effect")
                .isInstanceOf(IllegalStateException.class)
                .isNotInstanceOf(ReplayedFailureException.class);
        assertThat(bookings.runs()).hasValue(2);
        assertThatThrownBy(() -> bookings.bookKeepingOnFailure(seat)).isInstanceOf(ReplayedFailureException.class);
        assertThat(rows()).isEqualTo(1);
    }

    @Autowired
    org.springframework.beans.factory.BeanFactory beans;

    @Autowired
    javax.sql.DataSource dataSource;

    @Test
    void aMethodThatAlsoTakesALockStoresItsResultAfterTheCommitSoTheLockCoversTheCommit() throws Exception {
        TransactionalResults results = new TransactionalResults(beans, () -> dataSource);

        assertThat(results.runnerFor(
                        Bookings.class.getMethod("bookOrFail", String.class, boolean.class), Bookings.class))
                .as("@Idempotent @Transactional: the result in the transaction")
                .isNotNull();
        assertThat(results.runnerFor(Bookings.class.getMethod("bookUnderLock", String.class), Bookings.class))
                .as(
                        "with @WithDistributedLock: the lock is released after the commit, so no transaction is begun outside it")
                .isNull();
        assertThat(bookings.bookUnderLock(seat)).isEqualTo("booked " + seat);
        assertThat(bookings.bookUnderLock(seat)).isEqualTo("booked " + seat);
        assertThat(bookings.runs()).hasValue(1);
    }

    @Test
    void theResultIsInTheSameDatabaseAsTheEffect() {
        bookings.bookOrFail(seat, false);

        assertThat(jdbc.queryForObject("select count(*) from cerberus_locks_idem where completed = 1", Integer.class))
                .isPositive();
    }
}
