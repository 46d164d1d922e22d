package io.cerberus.spring;

import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The transactions of {@code cerberus.idempotency.http.transaction}: each request the Idempotency-Key filter runs
 * gets a transaction of the application's {@code DataSource} (the one the guard's records are in, engine
 * {@code jdbc:datasource}) around its first dispatch, begun by the context's transaction manager and bound to the
 * request's thread, so the application's {@code @Transactional} code joins it and the stored response is written in
 * it before it commits (docs/SPRING-WEB.md, "Responses in the request's transaction").
 *
 * <p>Invariants: a transaction begun here is ended (committed or rolled back) exactly once, on the thread that
 * began it, before the dispatch that began it returns ({@link GuardedExchange}). Needs spring-tx and spring-jdbc on
 * the class path; their types stay in the nested class, loaded only when the setting is on.
 */
interface RequestTransactions {
    /**
     * @param name the transaction's name, for the manager's logs
     * @return a transaction begun now and bound to this thread
     * @throws RuntimeException as the manager reports a failure to begin (the database is down, say)
     */
    Open begin(String name);

    /** One request's transaction. Not thread-safe: it belongs to the request's thread. */
    interface Open {
        /** @return whether the records' DataSource is bound to it, so that a completion can be written in it */
        boolean joinable();

        /** @return its connection to the records' DataSource */
        Connection connection();

        /** @return whether the application marked it rollback-only (an inner transactional call that failed) */
        boolean rollbackOnly();

        /** @throws RuntimeException if the commit failed: its outcome is unknown */
        void commit();

        void rollback();
    }

    /**
     * @param beans where the transaction manager is
     * @param dataSource the DataSource the guard's records are in
     * @return the transactions of the context's single transaction manager
     * @throws ConfigurationMistake if spring-tx or spring-jdbc is missing, or the context has no single manager
     */
    static RequestTransactions of(BeanFactory beans, DataSource dataSource) {
        ClassLoader loader = RequestTransactions.class.getClassLoader();
        if (!ClassUtils.isPresent("org.springframework.jdbc.datasource.DataSourceUtils", loader)
                || !ClassUtils.isPresent("org.springframework.transaction.PlatformTransactionManager", loader)) {
            throw new ConfigurationMistake(
                    "cerberus.idempotency.http.transaction=true needs spring-jdbc and spring-tx on the class path",
                    "Add spring-boot-starter-jdbc (or -data-jpa), or leave the setting out");
        }
        return SpringTransactions.of(beans, dataSource);
    }

    /** Keeps spring-tx and spring-jdbc optional: loaded only when the setting is on. */
    final class SpringTransactions implements RequestTransactions {
        private final org.springframework.transaction.PlatformTransactionManager manager;
        private final DataSource dataSource;

        private SpringTransactions(
                org.springframework.transaction.PlatformTransactionManager manager, DataSource dataSource) {
            this.manager = manager;
            this.dataSource = dataSource;
        }

        static RequestTransactions of(BeanFactory beans, DataSource dataSource) {
            var manager = beans.getBeanProvider(org.springframework.transaction.PlatformTransactionManager.class)
                    .getIfUnique();
            if (manager == null) {
                throw new ConfigurationMistake(
                        "cerberus.idempotency.http.transaction=true runs each guarded request in a transaction, but the"
                                + " context has no single PlatformTransactionManager",
                        "Define one transaction manager for the application's DataSource (Spring Boot's JDBC or JPA"
                                + " starter does), or leave the setting out");
            }
            return new SpringTransactions(manager, dataSource);
        }

        @Override
        public Open begin(String name) {
            var definition = new org.springframework.transaction.support.DefaultTransactionDefinition();
            definition.setName(name);
            var status = manager.getTransaction(definition);
            return new Open() {
                @Override
                public boolean joinable() {
                    return org.springframework.transaction.support.TransactionSynchronizationManager.hasResource(
                            dataSource);
                }

                @Override
                public Connection connection() {
                    return org.springframework.jdbc.datasource.DataSourceUtils.getConnection(dataSource);
                }

                @Override
                public boolean rollbackOnly() {
                    return status.isRollbackOnly();
                }

                @Override
                public void commit() {
                    manager.commit(status);
                }

                @Override
                public void rollback() {
                    manager.rollback(status);
                }
            };
        }
    }
}
