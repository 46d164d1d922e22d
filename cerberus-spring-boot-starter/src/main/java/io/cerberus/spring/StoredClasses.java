package io.cerberus.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ClassUtils;

/**
 * The one rule for a class named in a stored {@link Idempotent @Idempotent} result, on reading and
 * on writing, whichever Jackson writes the JSON ({@link ResultJson}, {@link Jackson2ResultJson}).
 * Stored data never chooses an arbitrary class: a stored class name is resolved by the method's
 * class loader without initializing the class, and used only if it is assignable to the declared
 * return type; under a JDK type ({@code Object}, {@code Serializable}, {@code Number}...) it must
 * also be a record, an enum, or a JDK value (String, a boxed primitive, BigDecimal, BigInteger,
 * UUID, java.time). Thread-safe.
 */
final class StoredClasses {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotentAspect.class);
    private static final Set<Class<?>> JDK_VALUES = Set.of(
            String.class,
            Boolean.class,
            Character.class,
            Byte.class,
            Short.class,
            Integer.class,
            Long.class,
            Float.class,
            Double.class,
            BigDecimal.class,
            BigInteger.class,
            UUID.class);

    private final ClassLoader loader;
    private final String method;
    private final Set<Class<?>> warned = ConcurrentHashMap.newKeySet();

    StoredClasses(Method method) {
        this.loader = method.getDeclaringClass().getClassLoader();
        this.method = Invocations.describe(method);
    }

    /** @return the method, for messages */
    String method() {
        return method;
    }

    /**
     * @param declared the declared return type, for the warning
     * @return the class to store with a result, or null to write it as its declared type
     */
    Class<?> storedClass(Class<?> actual, Class<?> declaredRaw, String declared) {
        Class<?> expected = ClassUtils.resolvePrimitiveIfNecessary(declaredRaw);
        Class<?> user = ClassUtils.getUserClass(actual);
        if (user == expected
                || user.isArray()
                || Collection.class.isAssignableFrom(user)
                || Map.class.isAssignableFrom(user)) {
            return null;
        }
        if (!readable(user, expected) || !resolvable(user)) {
            if (warned.add(user)) {
                LOG.warn(
                        "{} returned an instance of {}, which is stored as JSON of the declared return type {}: a duplicate"
                                + " gets what JSON makes of that (a map, for Object); declare a closer return type, or return a record",
                        method,
                        user.getName(),
                        declared);
            }
            return null;
        }
        return user;
    }

    private boolean resolvable(Class<?> type) {
        try {
            return Class.forName(type.getName(), false, loader) == type;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * @param declared the declared return type, for the message
     * @return the class a stored name stands for
     * @throws IllegalStateException if it is missing or not one this method may return
     */
    Class<?> resolve(String name, Class<?> declaredRaw, String declared) {
        Class<?> expected = ClassUtils.resolvePrimitiveIfNecessary(declaredRaw);
        if (name.equals(expected.getName())) {
            return expected;
        }
        Class<?> found;
        try {
            found = Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException(
                    "the stored result of " + method + " is a " + name + ", which this application"
                            + " does not have (was it renamed since?)",
                    e);
        }
        if (!readable(found, expected)) {
            throw new IllegalStateException("the stored result of " + method + " names the class " + name
                    + ", which is not a " + declared + " that can be read back; refused");
        }
        return found;
    }

    private static boolean readable(Class<?> type, Class<?> declaredRaw) {
        if (!declaredRaw.isAssignableFrom(type)
                || type.isAnonymousClass()
                || type.isLocalClass()
                || type.isSynthetic()
                || type.isHidden()
                || type.isInterface()
                || Modifier.isAbstract(type.getModifiers())
                || type.isMemberClass() && !Modifier.isStatic(type.getModifiers())) {
            return false;
        }
        if (!isJdk(declaredRaw)) {
            return true;
        }
        return type.isRecord()
                || type.isEnum()
                || Modifier.isPublic(type.getModifiers())
                        && (JDK_VALUES.contains(type) || type.getPackageName().equals("java.time"));
    }

    private static boolean isJdk(Class<?> type) {
        String name = type.getName();
        return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.");
    }
}
