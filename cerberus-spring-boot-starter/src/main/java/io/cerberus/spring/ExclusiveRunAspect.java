package io.cerberus.spring;

import io.cerberus.Cerberus;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Runs an {@link ExclusiveRun @ExclusiveRun} method through {@link Cerberus#runExclusively}: skipped
 * quietly when another instance holds the lock (the call returns null, or a primitive's zero value),
 * run with the lock renewed otherwise. What the method throws is thrown as it is; the
 * annotation's duration is parsed once per method.
 */
@Aspect
final class ExclusiveRunAspect implements Ordered {
    private static final String ANNOTATION = "@ExclusiveRun";

    private final ObjectProvider<Cerberus> cerberus;
    private final Map<Method, Duration> atLeast = new ConcurrentHashMap<>();

    ExclusiveRunAspect(ObjectProvider<Cerberus> cerberus) {
        this.cerberus = cerberus;
    }

    @Override
    public int getOrder() {
        return WithDistributedLockAspect.ORDER;
    }

    @Around(value = "@annotation(annotation)", argNames = "call,annotation")
    @SuppressWarnings("try") // the fence scope is used by being open while the method runs
    Object runAround(ProceedingJoinPoint call, ExclusiveRun annotation) throws Throwable {
        Method method = Invocations.targetMethod(call);
        Duration keep = atLeast.computeIfAbsent(method, m -> atLeast(annotation, m));
        Object[] result = {zero(method.getReturnType())};
        Throwable[] failure = {null};
        cerberus.getObject()
                .runExclusively(
                        annotation.name(),
                        keep,
                        lease -> ExclusiveRuns.within(lease, () -> {
                            try (FencedCalls.Scope fenced = FencedCalls.underIfFenced(lease)) {
                                result[0] = call.proceed();
                            } catch (Throwable t) {
                                failure[0] = t;
                            }
                        }));
        if (failure[0] != null) {
            throw failure[0];
        }
        return result[0];
    }

    /** @throws IllegalArgumentException or IllegalStateException if the annotation's values or the method do not fit */
    static Duration atLeast(ExclusiveRun annotation, Method method) {
        if (Invocations.shape(ANNOTATION, method) != Invocations.Shape.PLAIN) {
            throw new IllegalStateException(ANNOTATION + " on " + Invocations.describe(method)
                    + " is not supported: it returns " + method.getReturnType().getSimpleName()
                    + ", so its work would end after the run; annotate the synchronous method that does the work");
        }
        if (annotation.name().isBlank()) {
            throw new IllegalArgumentException(ANNOTATION + " on " + Invocations.describe(method) + " needs a name");
        }
        Duration keep = Invocations.duration(ANNOTATION, "atLeast", annotation.atLeast(), method);
        return keep == null ? Duration.ZERO : keep;
    }

    private static Object zero(Class<?> type) {
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        return type == long.class ? 0L : type == double.class ? 0.0d : type == float.class ? 0.0f : (Object) 0;
    }
}
