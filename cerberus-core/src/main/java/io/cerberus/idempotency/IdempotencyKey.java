package io.cerberus.idempotency;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.Spliterator;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAccumulator;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.BaseStream;

/**
 * What identifies one business operation: an operation name and its content, hashed (SHA-256) into
 * a versioned id ({@code v1:HEX}), and a fingerprint of the payload that a reused key must match.
 * Immutable and thread-safe.
 *
 * <p>Content is hashed as canonical text, which equal content gets in every JVM:
 * <ul>
 * <li>Maps (string keys only), records and other objects through their public getters ({@code getX()},
 *     {@code isX()}) are written alike, names sorted: a record is the map of its components.
 * <li>Lists, deques and arrays keep their order. A {@link Set} is the list of its elements sorted by
 *     their canonical text, whatever its own order: {@code Set.of("b", "a")} is {@code List.of("a", "b")}.
 *     Other collections ({@code PriorityQueue}, {@code map.values()}), other iterables, iterators and
 *     streams are refused: pass a List or a Set.
 * <li>Numbers compare by value: {@code 1}, {@code 1L}, {@code 1.0}, {@code 1.0f}, {@code new BigDecimal("1.00")},
 *     {@code BigInteger.ONE} and {@code new AtomicLong(1)} are one number, and a float or double is the
 *     decimal it prints as ({@code 0.1f} is {@code 0.1}). A number whose last digit lies more than 1000
 *     places from the decimal point is written in scientific notation ({@code 1E+999999999}), so its
 *     text stays small. {@code Number} types whose exact value cannot be read are refused.
 * <li>An {@code Optional} ({@code OptionalInt}, {@code OptionalLong}, {@code OptionalDouble}) is its
 *     value, and {@code null} when empty.
 * <li>A Jackson {@code JsonNode} (2.x or 3.x, read by reflection: this module does not depend on
 *     Jackson) is the JSON it holds, like the maps, lists and values it reads as.
 * <li>Strings, characters and enum names are quoted text; an unpaired surrogate is written
 *     <code>&#92;uD800</code>, so it does not turn into {@code ?}. Booleans, {@code null} and
 *     {@code byte[]} (hex) complete the list; anything else is refused.
 * </ul>
 *
 * <pre>{@code
 * IdempotencyKey.ofContent("charge", Map.of("order", 42, "amount", 10.0))   // the content is the key
 * IdempotencyKey.of("charge", requestIdempotencyKeyHeader, requestBody)      // a client's key, checked against the body
 * }</pre>
 */
public final class IdempotencyKey {
    private static final String VERSION = "v1:";
    /** Past this many places between the last digit and the point, a number is written in scientific notation. */
    private static final int PLAIN_PLACES = 1000;
    /** The Jackson 2 and 3 node classes, known by name only. */
    private static final Set<String> JSON_NODES = Set.of("com.fasterxml.jackson.databind.JsonNode", "tools.jackson.databind.JsonNode");

    private final String operation;
    private final String id;
    private final String fingerprint;

    private IdempotencyKey(String operation, String id, String fingerprint) {
        this.operation = operation;
        this.id = id;
        this.fingerprint = fingerprint;
    }

    /**
     * A key made of the content itself: the same operation with the same content is the same key.
     *
     * @param operation the operation name, 1 to 256 characters, no NUL, no unpaired surrogate
     * @param content what the operation acts on (see the accepted types above)
     * @return the key
     * @throws IllegalArgumentException if the operation name breaks its rule, or the content has an unsupported type
     */
    public static IdempotencyKey ofContent(String operation, Object content) {
        String canonical = canonical(content);
        return new IdempotencyKey(checkOperation(operation), hash(operation + "\u0000" + canonical), hash(canonical));
    }

    /**
     * A key chosen by the client (an {@code Idempotency-Key} header), with the payload it must keep
     * coming with: the same key with another payload is refused with
     * {@link IdempotencyKeyMismatchException}.
     *
     * @param operation the operation name, 1 to 256 characters, no NUL, no unpaired surrogate
     * @param clientKey the client's key, 1 to 512 characters, no unpaired surrogate
     * @param payload the request's content
     * @return the key
     * @throws IllegalArgumentException if a name breaks its rule or the payload has an unsupported type
     */
    public static IdempotencyKey of(String operation, String clientKey, Object payload) {
        Objects.requireNonNull(clientKey, "clientKey");
        if (clientKey.isEmpty() || clientKey.length() > 512) {
            throw new IllegalArgumentException("an idempotency key must have 1 to 512 characters, had " + clientKey.length());
        }
        checkWellFormed("an idempotency key", clientKey);
        return new IdempotencyKey(checkOperation(operation), hash(operation + "\u0000key\u0000" + clientKey), hash(canonical(payload)));
    }

    private static String checkOperation(String operation) {
        if (operation == null || operation.isEmpty() || operation.length() > 256) {
            throw new IllegalArgumentException("an operation name must have 1 to 256 characters, was "
                    + (operation == null ? "null" : operation.length() + " long"));
        }
        if (operation.indexOf(0) >= 0) {
            // NUL separates the operation from what follows it in the hashed text
            throw new IllegalArgumentException("an operation name must not contain NUL, had one at index " + operation.indexOf(0));
        }
        checkWellFormed("an operation name", operation);
        return operation;
    }

    /** UTF-8 turns an unpaired surrogate into '?', so such a name would share its hash with another. */
    private static void checkWellFormed(String what, String text) {
        for (int i = 0; i < text.length(); i++) {
            if (unpaired(text, i)) {
                throw new IllegalArgumentException(what + " must not contain an unpaired surrogate, had one at index " + i);
            }
        }
    }

    /** @return the operation name */
    public String operation() {
        return operation;
    }

    /** @return the stored id: {@code v1:} and the SHA-256 of operation and content or client key, in hex */
    public String id() {
        return id;
    }

    /** @return the SHA-256 of the canonical payload, in hex */
    public String fingerprint() {
        return fingerprint;
    }

    /**
     * @param content a value
     * @return its canonical text: the same for equal content whatever the map order or number spelling
     * @throws IllegalArgumentException for an unsupported type
     */
    static String canonical(Object content) {
        StringBuilder out = new StringBuilder();
        write(content, out, 0);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out, int depth) {
        if (depth > 64) {
            throw new IllegalArgumentException("idempotency key content is nested more than 64 levels deep (a cycle?)");
        }
        if (value == null) {
            out.append("null");
        } else if (value instanceof CharSequence || value instanceof Character) {
            quote(value.toString(), out);
        } else if (value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Number number) {
            out.append('#').append(number(number));
        } else if (value instanceof Enum<?> e) {
            quote(e.name(), out);
        } else if (value instanceof byte[] bytes) {
            out.append("b'").append(HexFormat.of().formatHex(bytes)).append('\'');
        } else if (value instanceof Optional<?> || value instanceof OptionalInt || value instanceof OptionalLong
                || value instanceof OptionalDouble) {
            write(present(value), out, depth + 1);
        } else if (value instanceof Map<?, ?> map) {
            object(fields(map), out, depth);
        } else if (value instanceof List<?> || value instanceof Deque<?>) {
            array(((Collection<?>) value).toArray(), out, depth);
        } else if (value instanceof Set<?> set) {
            set(set, out, depth);
        } else if (value instanceof Collection<?>) {
            throw refused(value, "is a collection with no defined order");
        } else if (value instanceof Object[] array) {
            array(array, out, depth);
        } else if (value.getClass().isArray()) {
            Object[] boxed = new Object[java.lang.reflect.Array.getLength(value)];
            for (int i = 0; i < boxed.length; i++) {
                boxed[i] = java.lang.reflect.Array.get(value, i);
            }
            array(boxed, out, depth);
        } else if (value instanceof Record) {
            TreeMap<String, Object> fields = new TreeMap<>();
            for (RecordComponent component : value.getClass().getRecordComponents()) {
                fields.put(component.getName(), invoke(component.getAccessor(), value));
            }
            object(fields, out, depth);
        } else if (jsonNodeClass(value.getClass()) != null) {
            jsonNode(jsonNodeClass(value.getClass()), value, out, depth);
        } else if (value instanceof Iterable<?> || value instanceof Iterator<?> || value instanceof Spliterator<?>
                || value instanceof Enumeration<?> || value instanceof BaseStream<?, ?>) {
            // its getters, if any, do not show what it holds
            throw refused(value, "is an iterable, iterator or stream but not a collection");
        } else {
            object(properties(value), out, depth);
        }
    }

    private static IllegalArgumentException refused(Object value, String why) {
        return new IllegalArgumentException("idempotency key content: " + value.getClass().getName() + " " + why
                + "; pass a List to keep an order or a Set to ignore it");
    }

    /** The value of an Optional, OptionalInt, OptionalLong or OptionalDouble; null when empty. */
    private static Object present(Object optional) {
        if (optional instanceof Optional<?> o) {
            return o.orElse(null);
        } else if (optional instanceof OptionalInt o) {
            return o.isPresent() ? o.getAsInt() : null;
        } else if (optional instanceof OptionalLong o) {
            return o.isPresent() ? o.getAsLong() : null;
        }
        OptionalDouble o = (OptionalDouble) optional;
        return o.isPresent() ? o.getAsDouble() : null;
    }

    private static TreeMap<String, Object> fields(Map<?, ?> map) {
        TreeMap<String, Object> sorted = new TreeMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException("idempotency key content: map keys must be strings, found "
                        + (entry.getKey() == null ? "null" : entry.getKey().getClass().getName()));
            }
            if (sorted.containsKey(key)) {
                throw new IllegalArgumentException("idempotency key content: a " + map.getClass().getName() + " holds the key \""
                        + key + "\" twice");
            }
            sorted.put(key, entry.getValue());
        }
        return sorted;
    }

    /** A set's own order means nothing (HashSet and Set.of differ between JVMs): its elements are sorted by their text. */
    private static void set(Set<?> set, StringBuilder out, int depth) {
        List<String> items = new ArrayList<>(set.size());
        for (Object item : set) {
            StringBuilder text = new StringBuilder();
            write(item, text, depth + 1);
            items.add(text.toString());
        }
        Collections.sort(items);
        out.append('[').append(String.join(",", items)).append(']');
    }

    private static String number(Number number) {
        try {
            BigDecimal decimal = decimal(number).stripTrailingZeros();
            if (decimal.signum() == 0) {
                return "0";
            }
            // toPlainString writes one character per place, a billion for 1e999999999; every float and
            // double stays within the bound, so their text is what it always was
            boolean plain = decimal.scale() >= -PLAIN_PLACES && decimal.scale() <= PLAIN_PLACES;
            return plain ? decimal.toPlainString() : decimal.toString();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("idempotency key content: a number is out of range for a key (" + e.getMessage() + ")", e);
        }
    }

    private static BigDecimal decimal(Number number) {
        if (number instanceof BigDecimal d) {
            return d;
        } else if (number instanceof BigInteger i) {
            return new BigDecimal(i);
        } else if (number instanceof Float f) {
            finite(f);
            return new BigDecimal(f.toString());  // the float's own decimal: 0.1f is 0.1, not 0.10000000149011612
        } else if (number instanceof Double || number instanceof DoubleAdder || number instanceof DoubleAccumulator) {
            return BigDecimal.valueOf(finite(number.doubleValue()));
        } else if (number instanceof Long || number instanceof Integer || number instanceof Short || number instanceof Byte
                || number instanceof AtomicLong || number instanceof AtomicInteger || number instanceof LongAdder
                || number instanceof LongAccumulator) {
            return BigDecimal.valueOf(number.longValue());
        }
        throw new IllegalArgumentException("idempotency key content: " + number.getClass().getName()
                + " is a Number whose exact value cannot be read; pass a BigDecimal, a long or a double");
    }

    private static double finite(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("idempotency key content: " + value + " is not a number a key can hold");
        }
        return value;
    }

    private static Class<?> jsonNodeClass(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (JSON_NODES.contains(c.getName())) {
                return c;
            }
        }
        return null;
    }

    /** A Jackson node, read through the methods Jackson 2 and 3 share (or name differently). */
    private static void jsonNode(Class<?> nodeClass, Object node, StringBuilder out, int depth) {
        String type = ((Enum<?>) call(nodeClass, node, "getNodeType")).name();
        switch (type) {
            case "OBJECT" -> {
                Object properties = call(nodeClass, node, "properties", "fields");  // a Set, or an Iterator before Jackson 2.15
                Iterator<?> entries = properties instanceof Iterable<?> set ? set.iterator() : (Iterator<?>) properties;
                TreeMap<String, Object> fields = new TreeMap<>();
                while (entries.hasNext()) {
                    Map.Entry<?, ?> field = (Map.Entry<?, ?>) entries.next();
                    fields.put((String) field.getKey(), field.getValue());
                }
                object(fields, out, depth);
            }
            case "ARRAY" -> {
                List<Object> items = new ArrayList<>();
                ((Iterable<?>) node).forEach(items::add);
                array(items.toArray(), out, depth);
            }
            case "STRING" -> quote((String) call(nodeClass, node, "stringValue", "textValue"), out);
            case "NUMBER" -> write(call(nodeClass, node, "numberValue"), out, depth + 1);
            case "BOOLEAN" -> write(call(nodeClass, node, "booleanValue"), out, depth + 1);
            case "BINARY" -> write(call(nodeClass, node, "binaryValue"), out, depth + 1);
            case "POJO" -> write(call(node.getClass(), node, "getPojo"), out, depth + 1);
            case "NULL", "MISSING" -> out.append("null");
            default -> throw new IllegalArgumentException("idempotency key content: a Jackson node of type " + type
                    + " cannot be read; pass mapper.convertValue(node, Map.class)");
        }
    }

    /** Calls the first of the named no-argument methods that the type has. */
    private static Object call(Class<?> type, Object target, String... names) {
        for (String name : names) {
            try {
                return invoke(type.getMethod(name), target);
            } catch (NoSuchMethodException e) {
                // try the next name
            }
        }
        throw new IllegalArgumentException("idempotency key content: " + target.getClass().getName() + " has none of "
                + List.of(names) + "; pass mapper.convertValue(node, Map.class)");
    }

    private static void object(TreeMap<String, Object> fields, StringBuilder out, int depth) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, Object> field : fields.entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            quote(field.getKey(), out);
            out.append(':');
            write(field.getValue(), out, depth + 1);
        }
        out.append('}');
    }

    private static void array(Object[] items, StringBuilder out, int depth) {
        out.append('[');
        for (int i = 0; i < items.length; i++) {
            if (i > 0) {
                out.append(',');
            }
            write(items[i], out, depth + 1);
        }
        out.append(']');
    }

    private static TreeMap<String, Object> properties(Object bean) {
        TreeMap<String, Object> fields = new TreeMap<>();
        for (Method method : bean.getClass().getMethods()) {
            if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers()) || method.getDeclaringClass() == Object.class) {
                continue;
            }
            String name = method.getName();
            String property = name.startsWith("get") && name.length() > 3 ? name.substring(3)
                    : name.startsWith("is") && name.length() > 2 && (method.getReturnType() == boolean.class) ? name.substring(2) : null;
            if (property != null) {
                fields.put(Character.toLowerCase(property.charAt(0)) + property.substring(1), invoke(method, bean));
            }
        }
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("idempotency key content: " + bean.getClass().getName()
                    + " is not a supported type (strings, numbers, booleans, enums, byte[], maps, lists, sets, arrays, optionals,"
                    + " records, Jackson nodes, objects with getters)");
        }
        return fields;
    }

    private static Object invoke(Method accessor, Object target) {
        try {
            accessor.setAccessible(true);
            return accessor.invoke(target);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalArgumentException("idempotency key content: cannot read " + accessor.getName() + " of "
                    + target.getClass().getName(), e);
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (unpaired(text, i)) {
                // UTF-8 would make it '?'; a backslash in the text is always doubled, so this cannot be mistaken for text
                out.append("\\u").append(HexFormat.of().withUpperCase().toHexDigits(c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    private static boolean unpaired(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 == text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
    }

    private static String hash(String text) {
        try {
            return VERSION + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IdempotencyKey key && key.id.equals(id) && key.fingerprint.equals(fingerprint);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public String toString() {
        return "IdempotencyKey[" + operation + " " + id.substring(0, Math.min(id.length(), 15)) + "...]";
    }
}
