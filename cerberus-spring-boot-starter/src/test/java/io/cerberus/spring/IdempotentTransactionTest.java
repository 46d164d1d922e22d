package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.idempotency.ReplayedFailureException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@link Idempotent @Idempotent} over {@code @Transactional} methods on H2: a failure whose
 * transaction committed (Spring's rule for checked exceptions) is stored and replayed, so a retry
 * does not do the committed work again; a failure that rolls back releases the key.
 */
@SpringBootTest(classes = IdempotentTransactionTest.App.class, properties = "cerberus.engines=mem:transactions")
class IdempotentTransactionTest {
    @Autowired
    Bookings bookings;

    @Autowired
    JdbcTemplate jdbc;

    final String seat = UUID.randomUUID().toString();

    @BeforeEach
    void resetRuns() {
        bookings.runs().set(0);
    }

    int rows() {
        return jdbc.queryForObject("select count(*) from booking where seat = ?", Integer.class, seat);
    }

    @Test
    void aCheckedExceptionThatCommitsIsReplayedInsteadOfRunningAgain() {
        assertThatThrownBy(() -> bookings.book(seat)).isInstanceOf(NoConfirmationException.class);
        assertThat(rows()).as("committed in spite of the exception").isEqualTo(1);

        assertThatThrownBy(() -> bookings.book(seat))
                .isInstanceOf(ReplayedFailureException.class)
                .hasMessageContaining(NoConfirmationException.class.getName())
                .hasMessageContaining("no confirmation for " + seat)
                .hasMessageContaining("took effect all the same");
        assertThat(rows()).isEqualTo(1);
        assertThat(bookings.runs()).hasValue(1);
    }

    @Test
    void aCheckedExceptionThatRollsBackReleasesTheKey() throws Exception {
        assertThatThrownBy(() -> bookings.bookRollingBack(seat)).isInstanceOf(NoConfirmationException.class);
        assertThat(rows()).as("rolled back").isZero();

        bookings.confirm().set(true);
        try {
            assertThat(bookings.bookRollingBack(seat)).isEqualTo("booked " + seat);
        } finally {
            bookings.confirm().set(false);
        }
        assertThat(rows()).isEqualTo(1);
        assertThat(bookings.runs()).hasValue(2);
    }

    @Test
    void aRuntimeExceptionRollsBackAndReleasesTheKey() {
        assertThatThrownBy(() -> bookings.bookOrFail(seat, true)).isInstanceOf(IllegalStateException.class);
        assertThat(bookings.bookOrFail(seat, false)).isEqualTo("booked " + seat);
        assertThat(rows()).isEqualTo(1);
        assertThat(bookings.runs()).hasValue(2);
    }

    @Test
    void aRuntimeExceptionThatIsToldNotToRollBackIsReplayed() {
        assertThatThrownBy(() -> bookings.bookKeepingOnFailure(seat)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> bookings.bookKeepingOnFailure(seat)).isInstanceOf(ReplayedFailureException.class);
        assertThat(rows()).isEqualTo(1);
        assertThat(bookings.runs()).hasValue(1);
    }

    @Test
    void aMethodOutsideATransactionReleasesTheKeyOnACheckedException() throws Exception {
        assertThatThrownBy(() -> bookings.bookWithoutTransaction(seat)).isInstanceOf(NoConfirmationException.class);
        assertThatThrownBy(() -> bookings.bookWithoutTransaction(seat)).isInstanceOf(NoConfirmationException.class);
        assertThat(bookings.runs()).hasValue(2);
    }

    static class NoConfirmationException extends Exception {
        private static final long serialVersionUID = 1L;

        NoConfirmationException(String message) {
            super(message);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableTransactionManagement
    @Import(Bookings.class)
    static class App {
        @Bean
        DataSource dataSource() {
            return new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true)
                    .addScript("classpath:io/cerberus/spring/bookings.sql")
                    .build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }
    }

    static class Bookings {
        final AtomicInteger runs = new AtomicInteger();
        final java.util.concurrent.atomic.AtomicBoolean confirm = new java.util.concurrent.atomic.AtomicBoolean();

        @Autowired
        JdbcTemplate jdbc;

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        /** @return set to make {@link #bookRollingBack} succeed */
        public java.util.concurrent.atomic.AtomicBoolean confirm() {
            return confirm;
        }

        private String insert(String seat) {
            runs.incrementAndGet();
            jdbc.update("insert into booking (seat) values (?)", seat);
            return "booked " + seat;
        }

        @Idempotent(key = "#seat")
        @Transactional
        public String book(String seat) throws NoConfirmationException {
            insert(seat);
            throw new NoConfirmationException("no confirmation for " + seat);
        }

        @Idempotent(key = "#seat")
        @Transactional(rollbackFor = NoConfirmationException.class)
        public String bookRollingBack(String seat) throws NoConfirmationException {
            String booked = insert(seat);
            if (!confirm.get()) {
                throw new NoConfirmationException("no confirmation for " + seat);
            }
            return booked;
        }

        @Idempotent(key = "#seat")
        @Transactional
        public String bookOrFail(String seat, boolean fail) {
            String booked = insert(seat);
            if (fail) {
                throw new IllegalStateException("the payment failed");
            }
            return booked;
        }

        @Idempotent(key = "#seat")
        @Transactional(noRollbackFor = IllegalStateException.class)
        public String bookKeepingOnFailure(String seat) {
            insert(seat);
            throw new IllegalStateException("the receipt could not be printed");
        }

        @Idempotent(key = "#seat")
        @WithDistributedLock(key = "'seats'", waitTime = "10s")
        @Transactional
        public String bookUnderLock(String seat) {
            return insert(seat);
        }

        @Idempotent(key = "#seat")
        @Transactional(propagation = Propagation.NOT_SUPPORTED)
        public String bookWithoutTransaction(String seat) throws NoConfirmationException {
            runs.incrementAndGet();
            throw new NoConfirmationException("no confirmation for " + seat);
        }
    }
}
