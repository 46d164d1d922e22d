package io.cerberus.spring;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.ResolvableType;

/** What both aspects need to know about an annotated call: its method, its durations, how it returns its work. */
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

    /** How a method hands back its work, which decides when an aspect's hold ends. */
    enum Shape {
        /** The work is done when the method returns. */
        PLAIN,
        /** {@code CompletableFuture} or {@code CompletionStage}: done when the stage completes. */
        FUTURE,
        /** Reactor's {@code Mono}: runs when subscribed, done on its signal or cancel. */
        MONO,
        /** Reactor's {@code Flux}: runs when subscribed, done on its last signal or cancel. */
        FLUX
    }

    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";

    /**
     * @return how the method hands back its work; Reactor's types are told by name, so this loads no Reactor class
     * @throws IllegalStateException if the method returns a future or publisher of another kind, whose end the
     *     aspect cannot follow (a {@code Future}, a Reactive Streams {@code Publisher} other than Mono and Flux,
     *     a Kotlin flow)
     */
    static Shape shape(String annotation, Method method) {
        Class<?> type = method.getReturnType();
        if (type == CompletableFuture.class || type == CompletionStage.class) {
            return Shape.FUTURE;
        }
        if (type.getName().equals(MONO)) {
            return Shape.MONO;
        }
        if (type.getName().equals(FLUX)) {
            return Shape.FLUX;
        }
        if (CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type) || isReactive(type)) {
            throw new IllegalStateException(annotation + " on " + describe(method) + " is not supported: it returns "
                    + type.getSimpleName() + ", whose end the aspect cannot follow; declare CompletableFuture,"
                    + " CompletionStage, Mono or Flux, or annotate the synchronous method that does the work");
        }
        return Shape.PLAIN;
    }

    /**
     * @return what the method's work gives: the return type, or the element type of a future, Mono or Flux
     *     ({@code Object} when the method leaves it open)
     */
    static Type resultType(Method method) {
        if (shape("", method) == Shape.PLAIN) {
            return method.getGenericReturnType();
        }
        Type element = ResolvableType.forMethodReturnType(method).getGeneric(0).getType();
        return element instanceof Class<?> || element instanceof ParameterizedType ? element : Object.class;
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
