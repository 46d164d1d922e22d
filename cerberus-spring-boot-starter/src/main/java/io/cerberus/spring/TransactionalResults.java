package io.cerberus.spring;

import io.cerberus.idempotency.IdempotencyAttempt;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.aspectj.lang.ProceedingJoinPoint;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Writes the result of an {@link Idempotent @Idempotent} method in the method's own Spring transaction,
 * so the result commits if and only if the method's effects do (docs/IDEMPOTENCY.md, "Exactly once with
 * your data"). It applies when the guard's records are in the application's {@code DataSource} (the
 * {@code jdbc:datasource} engine), the method is {@code @Transactional} with a propagation that joins a
 * transaction begun around it (REQUIRED, SUPPORTS, MANDATORY, NESTED), takes no lock itself
 * ({@code @WithDistributedLock}, {@code @ExclusiveRun}: the lock must outlive the commit), and the context
 * has the transaction manager it names (or a single one); else the result is stored after the commit.
 *
 * <p>Invariants: the transaction is begun here, with the method's own attribute and manager, around the
 * call (the method's interceptor joins it), so the result is written on its connection before it commits;
 * whenever that transaction does not commit (a rollback, a failed commit, an outer transaction that rolls
 * back later) the key is freed at its end; a failure is settled by the method's rollback rules. Needs
 * spring-tx and spring-jdbc on the class path. Thread-safe.
 */
final class TransactionalResults {
    private static final boolean SPRING_JDBC = ClassUtils.isPresent(
                    "org.springframework.jdbc.datasource.DataSourceUtils", TransactionalResults.class.getClassLoader())
            && ClassUtils.isPresent(
                    "org.springframework.transaction.interceptor.TransactionAttributeSource",
                    TransactionalResults.class.getClassLoader());

    private final BeanFactory beans;
    private final Supplier<DataSource> records;

    /**
     * @param beans where the transaction attributes and managers are
     * @param records the DataSource the guard's records are in, or a supplier of null when they are elsewhere
     */
    TransactionalResults(BeanFactory beans, Supplier<DataSource> records) {
        this.beans = beans;
        this.records = records;
    }

    /** Runs one attempt's call in a transaction that takes its result too. */
    interface Runner {
        /**
         * @param attempt an attempt that must run
         * @return what the method returned
         * @throws Throwable what the method threw (settled by its rollback rules), or what the commit threw
         */
        Object run(IdempotencyAttempt<Object> attempt, ProceedingJoinPoint call) throws Throwable;
    }

    /** @return how to run this method with its result in its transaction, or null if it does not apply */
    Runner runnerFor(Method method, Class<?> targetClass) {
        if (!SPRING_JDBC
                || method.isAnnotationPresent(WithDistributedLock.class)
                || method.isAnnotationPresent(ExclusiveRun.class)) {
            return null; // a lock taken inside a transaction begun here would be released before its commit
        }
        DataSource dataSource = records.get();
        return dataSource == null ? null : SpringTransactions.runner(beans, dataSource, method, targetClass);
    }

    /** Keeps spring-tx and spring-jdbc optional: loaded only when they are on the class path. */
    private static final class SpringTransactions {
        static Runner runner(BeanFactory beans, DataSource dataSource, Method method, Class<?> targetClass) {
            var attribute = TransactionRules.SpringTransactions.attribute(beans, method, targetClass);
            if (attribute == null || !joins(attribute.getPropagationBehavior())) {
                return null;
            }
            var manager = manager(beans, attribute.getQualifier());
            if (manager == null) {
                return null;
            }
            return (attempt, call) -> run(attempt, call, attribute, manager, dataSource);
        }

        private static boolean joins(int propagation) {
            return propagation == org.springframework.transaction.TransactionDefinition.PROPAGATION_REQUIRED
                    || propagation == org.springframework.transaction.TransactionDefinition.PROPAGATION_SUPPORTS
                    || propagation == org.springframework.transaction.TransactionDefinition.PROPAGATION_MANDATORY
                    || propagation == org.springframework.transaction.TransactionDefinition.PROPAGATION_NESTED;
        }

        private static org.springframework.transaction.PlatformTransactionManager manager(
                BeanFactory beans, String qualifier) {
            if (qualifier != null && !qualifier.isEmpty()) {
                return org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                        beans, org.springframework.transaction.PlatformTransactionManager.class, qualifier);
            }
            return beans.getBeanProvider(org.springframework.transaction.PlatformTransactionManager.class)
                    .getIfUnique();
        }

        private static Object run(
                IdempotencyAttempt<Object> attempt,
                ProceedingJoinPoint call,
                org.springframework.transaction.interceptor.TransactionAttribute attribute,
                org.springframework.transaction.PlatformTransactionManager manager,
                DataSource dataSource)
                throws Throwable {
            var status = manager.getTransaction(attribute);
            Object result;
            try {
                result = call.proceed();
            } catch (Throwable failure) {
                if (attribute.rollbackOn(failure)) {
                    manager.rollback(status);
                    attempt.fail(failure);
                } else if (bound(dataSource)) {
                    // its effect stays: the failure is stored with it, so a retry does not run it twice
                    try {
                        commitWith(attempt, status, manager, dataSource, connection -> {
                            attempt.failIn(connection, failure);
                            return null;
                        });
                    } catch (Throwable notCommitted) {
                        failure.addSuppressed(notCommitted); // rolled back, effect and failure: the key is free
                    }
                } else {
                    manager.commit(status);
                    attempt.fail(failure, true);
                }
                throw failure;
            }
            if (!bound(dataSource)) {
                // the manager does not manage the records' DataSource: the result is stored after the commit
                manager.commit(status);
                return attempt.complete(result).value();
            }
            return commitWith(
                    attempt,
                    status,
                    manager,
                    dataSource,
                    connection -> attempt.completeIn(connection, result).value());
        }

        /** @return whether the transaction begun is an actual one on the records' DataSource */
        private static boolean bound(DataSource dataSource) {
            return org.springframework.transaction.support.TransactionSynchronizationManager.isActualTransactionActive()
                    && org.springframework.transaction.support.TransactionSynchronizationManager.hasResource(
                            dataSource);
        }

        /** What is written in the transaction before its commit. */
        private interface Settlement {
            Object settle(java.sql.Connection connection) throws java.sql.SQLException;
        }

        /**
         * Settles the attempt in the transaction, then commits it; whenever it does not commit (now, or an outer
         * transaction later) the key is freed at its end.
         */
        private static Object commitWith(
                IdempotencyAttempt<Object> attempt,
                org.springframework.transaction.TransactionStatus status,
                org.springframework.transaction.PlatformTransactionManager manager,
                DataSource dataSource,
                Settlement settlement)
                throws Throwable {
            org.springframework.transaction.support.TransactionSynchronizationManager.registerSynchronization(
                    new org.springframework.transaction.support.TransactionSynchronization() {
                        @Override
                        public void afterCompletion(int outcome) {
                            if (outcome != STATUS_COMMITTED) {
                                attempt.rolledBack();
                            }
                        }
                    });
            Object value;
            try {
                value = settlement.settle(
                        org.springframework.jdbc.datasource.DataSourceUtils.getConnection(dataSource));
            } catch (Throwable failure) {
                manager.rollback(status);
                throw failure;
            }
            manager.commit(status);
            return value;
        }
    }
}
