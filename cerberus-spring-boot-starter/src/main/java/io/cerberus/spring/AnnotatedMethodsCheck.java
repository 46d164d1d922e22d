package io.cerberus.spring;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks every bean's {@link WithDistributedLock @WithDistributedLock} and {@link Idempotent @Idempotent}
 * methods when the bean is created, so that a bad duration, a key that does not parse, or a method
 * that returns a kind of future the aspects cannot follow fails the application's start rather than the method's first call, which
 * may come days later. What can only be known at a call (the key's value) is still checked then.
 */
final class AnnotatedMethodsCheck implements BeanPostProcessor {
    private static final List<Class<? extends java.lang.annotation.Annotation>> ANNOTATIONS =
            List.of(WithDistributedLock.class, Idempotent.class, ExclusiveRun.class);

    private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(type, ANNOTATIONS) || !checked.add(type)) {
            return bean;
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            try {
                check(method);
            } catch (IllegalArgumentException | IllegalStateException e) {
                checked.remove(type);
                throw new BeanInitializationException(e.getMessage(), e);
            }
        }
        return bean;
    }

    /**
     * @throws IllegalArgumentException or {@link IllegalStateException} naming the annotation, the
     *     attribute and the method, as the method's first call would
     */
    static void check(Method method) {
        WithDistributedLock lock = method.getAnnotation(WithDistributedLock.class);
        if (lock != null) {
            WithDistributedLockAspect.times(lock, method);
            KeyExpressions.parse("@WithDistributedLock", lock.key(), method);
        }
        ExclusiveRun run = method.getAnnotation(ExclusiveRun.class);
        if (run != null) {
            ExclusiveRunAspect.atLeast(run, method);
        }
        Idempotent idempotent = method.getAnnotation(Idempotent.class);
        if (idempotent != null) {
            IdempotentAspect.check(idempotent, method, ResultJsons.DEFAULTS);
            KeyExpressions.parse("@Idempotent", idempotent.key(), method);
        }
    }
}
