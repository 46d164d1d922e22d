package io.cerberus.testkit;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Proxy;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Walks every class of the given packages on the class path (main code: folders named
 * {@code test-classes} are left out) and finds each that holds a URI or a credential: a field
 * whose name says uri, url, password, secret or credential (a field holding a URI already
 * redacted is named for that: {@code shown}). Each such class that prints itself must print
 * without the secret: a record is built through its canonical constructor, another class without
 * running a constructor, with a secret in those fields and harmless values elsewhere, or through
 * a factory the test gives; one it cannot build or print is a failure, never a skip.
 */
public final class SecretsInToString {
    /** The secret the walk puts in each credential. */
    public static final String SECRET = "S3cr3tWalkValue";
    /** A URI carrying it in every place one can: user-info, a secret parameter, a misspelt one. */
    public static final String URI =
            "redis://app:" + SECRET + "@127.0.0.1:6379/0?pasword=" + SECRET + "&password=" + SECRET;

    private static final Pattern HOLDS_SECRET = Pattern.compile("(?i).*(uri|url|password|secret|credential).*");

    private SecretsInToString() {}

    /**
     * @param packages package prefixes to walk, e.g. {@code io.cerberus.redis}
     * @param factories builders of classes that are not records, or whose record components need real values
     * @return a line per class that shows the secret or cannot be built; empty when all is well
     */
    public static List<String> problems(List<String> packages, Map<Class<?>, Supplier<Object>> factories) {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Class<?> type : classes(packages)) {
            if (!holdsSecret(type) || type.isInterface() || type.isEnum() || Modifier.isAbstract(type.getModifiers())) {
                continue;
            }
            Supplier<Object> factory = factories.get(type);
            boolean printsItself = declaresToString(type);
            if (factory == null && !type.isRecord() && !printsItself) {
                continue; // Object's toString: a class name and a hash
            }
            String shown;
            try {
                Object instance = factory != null ? factory.get() : build(type);
                shown = String.valueOf(instance);
            } catch (ReflectiveOperationException | RuntimeException e) {
                problems.add(type.getName() + ": cannot be built to check its toString (" + e + "); give a factory");
                continue;
            }
            checked++;
            if (shown.contains(SECRET)) {
                problems.add(type.getName() + " shows a secret in its toString: " + shown);
            }
        }
        if (checked == 0) {
            problems.add("no class holding a URI or credential found under " + packages
                    + ": the walk found nothing to check");
        }
        return problems;
    }

    private static boolean holdsSecret(Class<?> type) {
        for (Field field : type.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())
                    && HOLDS_SECRET.matcher(field.getName()).matches()) {
                return true;
            }
        }
        return false;
    }

    private static boolean declaresToString(Class<?> type) {
        try {
            type.getDeclaredMethod("toString");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static Object build(Class<?> type) throws ReflectiveOperationException {
        if (!type.isRecord()) {
            return withFields(type);
        }
        RecordComponent[] components = type.getRecordComponents();
        Class<?>[] types = new Class<?>[components.length];
        Object[] values = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            values[i] = value(
                    components[i].getType(),
                    components[i].getGenericType(),
                    HOLDS_SECRET.matcher(components[i].getName()).matches());
        }
        Constructor<?> constructor = type.getDeclaredConstructor(types);
        constructor.setAccessible(true);
        return constructor.newInstance(values);
    }

    /**
     * A class that is not a record, made without running a constructor (as deserialisation does),
     * its fields given the values a record's components would get.
     */
    private static Object withFields(Class<?> type) throws ReflectiveOperationException {
        Class<?> factoryType = Class.forName("sun.reflect.ReflectionFactory"); // jdk.unsupported: no constructor runs
        Object factory = factoryType.getMethod("getReflectionFactory").invoke(null);
        Constructor<?> blank = (Constructor<?>) factoryType
                .getMethod("newConstructorForSerialization", Class.class, Constructor.class)
                .invoke(factory, type, Object.class.getDeclaredConstructor());
        Object instance = blank.newInstance();
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                field.setAccessible(true);
                Object value = value(
                        field.getType(),
                        field.getGenericType(),
                        HOLDS_SECRET.matcher(field.getName()).matches());
                if (value != null || !field.getType().isPrimitive()) {
                    field.set(instance, value);
                }
            }
        }
        return instance;
    }

    private static Object value(Class<?> type, Type generic, boolean secret) {
        if (type == String.class) {
            return secret ? URI : "x";
        }
        if (type == char[].class) {
            return SECRET.toCharArray();
        }
        if (type == Optional.class) {
            Class<?> inner = typeArgument(generic);
            return inner == String.class && secret ? Optional.of(SECRET) : Optional.empty();
        }
        if (type == List.class) {
            return typeArgument(generic) == String.class && secret ? List.of(URI) : List.of();
        }
        if (type == Set.class) {
            return Set.of();
        }
        if (type == Map.class) {
            return Map.of();
        }
        if (type == Duration.class) {
            return Duration.ofSeconds(1);
        }
        if (type == Path.class) {
            return Path.of("/tmp");
        }
        if (type == int.class || type == Integer.class) {
            return 1;
        }
        if (type == long.class || type == Long.class) {
            return 1L;
        }
        if (type == boolean.class || type == Boolean.class) {
            return false;
        }
        if (type.isEnum()) {
            return type.getEnumConstants()[0];
        }
        if (type.isInterface()) {
            return Proxy.newProxyInstance(
                    type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> switch (method.getName()) {
                        case "toString" -> type.getSimpleName();
                        case "hashCode" -> 0;
                        case "equals" -> proxy == args[0];
                        default -> null;
                    });
        }
        return null;
    }

    private static Class<?> typeArgument(Type generic) {
        if (generic instanceof ParameterizedType parameterized
                && parameterized.getActualTypeArguments()[0] instanceof Class<?> inner) {
            return inner;
        }
        return Object.class;
    }

    private static Set<Class<?>> classes(List<String> packages) {
        Set<String> names = new TreeSet<>();
        for (String pkg : packages) {
            String folder = pkg.replace('.', '/');
            try {
                Enumeration<URL> roots =
                        SecretsInToString.class.getClassLoader().getResources(folder);
                for (URL root : Collections.list(roots)) {
                    if (root.getProtocol().equals("file")) {
                        Path dir = Path.of(root.toURI());
                        if (dir.toString().contains(File.separator + "test-classes")) {
                            continue;
                        }
                        try (Stream<Path> files = Files.walk(dir)) {
                            files.map(dir::relativize)
                                    .map(Path::toString)
                                    .filter(f -> f.endsWith(".class"))
                                    .forEach(f -> names.add(pkg + "."
                                            + f.substring(0, f.length() - 6).replace(File.separatorChar, '.')));
                        }
                    } else if (root.getProtocol().equals("jar")) {
                        JarURLConnection connection = (JarURLConnection) root.openConnection();
                        connection.setUseCaches(false); // closing a cached jar would close the class loader's
                        try (JarFile jar = connection.getJarFile()) {
                            for (JarEntry entry : Collections.list(jar.entries())) {
                                String name = entry.getName();
                                if (name.startsWith(folder + "/") && name.endsWith(".class")) {
                                    names.add(
                                            name.substring(0, name.length() - 6).replace('/', '.'));
                                }
                            }
                        }
                    }
                }
            } catch (IOException | URISyntaxException e) {
                throw new IllegalStateException("cannot list the classes of " + pkg, e);
            }
        }
        Set<Class<?>> classes = new java.util.LinkedHashSet<>();
        for (String name : names) {
            if (name.endsWith("module-info") || name.endsWith("package-info")) {
                continue;
            }
            try {
                classes.add(Class.forName(name, false, SecretsInToString.class.getClassLoader()));
            } catch (ClassNotFoundException | LinkageError e) {
                // a class needing an optional dependency absent here: it cannot be built either
            }
        }
        return classes;
    }
}
