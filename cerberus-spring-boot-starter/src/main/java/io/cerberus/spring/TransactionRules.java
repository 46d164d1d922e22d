package io.cerberus.spring;

import java.lang.reflect.Method;
import java.util.function.Predicate;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Tells which failures of an {@link Idempotent @Idempotent} method leave its effects committed: those
 * of a method that runs in a Spring-managed transaction ({@code @Transactional} on the method or its
 * class, as the context's {@code TransactionAttributeSource} reads it) whose rollback rules do not
 * roll back on that exception. By Spring's default that is every checked exception; a
 * {@code noRollbackFor} adds more, a {@code rollbackFor} takes some away. Without spring-tx on the
 * class path, without transaction management in the context, or for a method that runs outside a
 * transaction ({@code NOT_SUPPORTED}, {@code NEVER}, no attribute), no failure commits. Thread-safe.
 */
final class TransactionRules {
    private static final boolean SPRING_TX = ClassUtils.isPresent(
            "org.springframework.transaction.interceptor.TransactionAttributeSource",
            TransactionRules.class.getClassLoader());

    private final BeanFactory beans;

    /** @param beans where the context's TransactionAttributeSource is, when it has one */
    TransactionRules(BeanFactory beans) {
        this.beans = beans;
    }

    /**
     * @param method the method, as declared by the target class
     * @param targetClass the bean's class
     * @return whether a failure of this method commits its transaction, or null if the method runs
     *     in no transaction
     */
    Predicate<Throwable> committedOn(Method method, Class<?> targetClass) {
        return SPRING_TX ? SpringTransactions.committedOn(beans, method, targetClass) : null;
    }

    /** Keeps spring-tx optional: loaded only when it is on the class path. */
    static final class SpringTransactions {
        /** @return the method's transaction attribute, as the context's TransactionAttributeSource reads it, or null */
        static org.springframework.transaction.interceptor.TransactionAttribute attribute(
                BeanFactory beans, Method method, Class<?> targetClass) {
            var source = beans.getBeanProvider(
                            org.springframework.transaction.interceptor.TransactionAttributeSource.class)
                    .getIfUnique();
            return source == null ? null : source.getTransactionAttribute(method, targetClass);
        }

        static Predicate<Throwable> committedOn(BeanFactory beans, Method method, Class<?> targetClass) {
            var attribute = attribute(beans, method, targetClass);
            if (attribute == null
                    || attribute.getPropagationBehavior()
                            == org.springframework.transaction.TransactionDefinition.PROPAGATION_NOT_SUPPORTED
                    || attribute.getPropagationBehavior()
                            == org.springframework.transaction.TransactionDefinition.PROPAGATION_NEVER) {
                return null;
            }
            return failure -> !attribute.rollbackOn(failure);
        }
    }
}
