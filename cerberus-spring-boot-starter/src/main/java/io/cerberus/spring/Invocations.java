package io.cerberus.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;

/** What both aspects need to know about an annotated call: its method, its durations, its return type. */
final class Invocations {

    private Invocations() {}

    /** @return the method as declared by the bean's class, which carries the parameter names */
    static Method targetMethod(ProceedingJoinPoint call) {
        Method method = ((MethodSignature) call.getSignature()).getMethod();
        return call.getTarget() == null
                ? method
                : AopUtils.getMostSpecificMethod(method, AopUtils.getTargetClass(call.getTarget()));
    }

    /** @return {@code Type.method(..)}, for messages */
    static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "(..)";
    }

    /**
     * @return the duration, or null for empty text
     * @throws IllegalArgumentException naming the annotation, the attribute and the method if the text is not a duration
     */
    static Duration duration(String annotation, String attribute, String text, Method method) {
        if (text == null || text.isBlank()) {
            return null;
        }
        Duration value;
        try {
            value = DurationStyle.detectAndParse(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    annotation + "(" + attribute + " = \"" + text + "\") on " + describe(method)
                            + " is not a duration: write 500ms, 5s, 1m, 1d or PT5S",
                    e);
        }
        if (value.isNegative()) {
            throw new IllegalArgumentException(annotation + "(" + attribute + " = \"" + text + "\") on "
                    + describe(method) + " must not be negative");
        }
        return value;
    }

    /**
     * @throws IllegalStateException if the method hands its work to another thread, so that the
     *     aspect would end (release the lock, store the result) before the work does
     */
    static void refuseAsynchronous(String annotation, Method method) {
        Class<?> type = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type) || isReactive(type)) {
            throw new IllegalStateException(
                    annotation + " on " + describe(method) + " is not supported: it returns " + type.getSimpleName()
                            + ", so its work would end after the aspect; annotate the synchronous method that does the work");
        }
    }

    private static boolean isReactive(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals("org.reactivestreams.Publisher")
                    || c.getName().startsWith("kotlinx.coroutines.flow.")) {
                return true;
            }
            for (Class<?> each : c.getInterfaces()) {
                if (each.getName().equals("org.reactivestreams.Publisher") || isReactive(each)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return {@code 250ms}, {@code 5s}, for messages */
    static String format(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }
}
