package io.cerberus.spring;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Evaluates the SpEL keys of {@link WithDistributedLock} and {@link Idempotent} over a call's
 * arguments: {@code #name} (needs {@code -parameters}), {@code #p0} / {@code #a0},
 * {@code @bean}. Parsed expressions are cached per method. Thread-safe.
 */
final class KeyExpressions {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final BeanFactoryResolver beans;
    private final Map<CacheKey, Expression> parsed = new ConcurrentHashMap<>();

    private record CacheKey(Method method, String expression) {}

    KeyExpressions(BeanFactory beanFactory) {
        this.beans = new BeanFactoryResolver(beanFactory);
    }

    /**
     * @param annotation the annotation, for messages ({@code @WithDistributedLock})
     * @param expression the SpEL key
     * @param method the annotated method (of the target class)
     * @param target the bean, the root object of the expression
     * @param args the call's arguments
     * @return the key's value, not null
     * @throws IllegalArgumentException if the expression is empty, does not parse, fails, or gives null
     */
    Object evaluate(String annotation, String expression, Method method, Object target, Object[] args) {
        Expression parsedExpression =
                parsed.computeIfAbsent(new CacheKey(method, expression), key -> parse(annotation, expression, method));
        Object value;
        try {
            MethodBasedEvaluationContext context =
                    new MethodBasedEvaluationContext(target, method, args, PARAMETER_NAMES);
            context.setBeanResolver(beans);
            value = parsedExpression.getValue(context);
        } catch (ExpressionException e) {
            throw new IllegalArgumentException(
                    where(annotation, expression, method) + " could not be evaluated: " + e.getMessage()
                            + (expression.contains("#")
                                    ? " (parameters are #name when compiled with -parameters, else #p0, #p1, ...)"
                                    : ""),
                    e);
        }
        if (value == null) {
            throw new IllegalArgumentException(
                    where(annotation, expression, method) + " gave null; a key must have a value");
        }
        return value;
    }

    /**
     * @return the parsed key
     * @throws IllegalArgumentException naming the annotation, the expression and the method if the
     *     key is empty or does not parse
     */
    static Expression parse(String annotation, String expression, Method method) {
        if (expression == null || expression.isBlank()) {
            throw new IllegalArgumentException(where(annotation, expression, method) + ": the key must not be empty");
        }
        try {
            return PARSER.parseExpression(expression);
        } catch (ExpressionException e) {
            throw new IllegalArgumentException(
                    where(annotation, expression, method) + " does not parse: " + e.getMessage(), e);
        }
    }

    private static String where(String annotation, String expression, Method method) {
        return annotation + "(key = \"" + expression + "\") on " + Invocations.describe(method);
    }
}
