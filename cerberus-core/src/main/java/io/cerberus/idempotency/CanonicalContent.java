package io.cerberus.idempotency;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
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
 * The canonical text of idempotency key content, which equal content gets in every JVM and after a
 * restart. Content it cannot write faithfully is refused, never collapsed.
 *
 * <p>The rules are those of {@link IdempotencyKey}'s header; they change only with the id's version.
 */
final class CanonicalContent {
    /** Past this many places between the last digit and the point, a number is written in scientific notation. */
    private static final int PLAIN_PLACES = 1000;
    /** The Jackson 2 and 3 node classes, known by name only. */
    private static final Set<String> JSON_NODES =
            Set.of("com.fasterxml.jackson.databind.JsonNode", "tools.jackson.databind.JsonNode");

    private CanonicalContent() {}

    /**
     * @param content a value
     * @return its canonical text: the same for equal content whatever the map order or number spelling
     * @throws IllegalArgumentException for an unsupported type
     */
    static String of(Object content) {
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
        } else if (value instanceof Optional<?>
                || value instanceof OptionalInt
                || value instanceof OptionalLong
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
        } else if (value instanceof Iterable<?>
                || value instanceof Iterator<?>
                || value instanceof Spliterator<?>
                || value instanceof Enumeration<?>
                || value instanceof BaseStream<?, ?>) {
            // its getters, if any, do not show what it holds
            throw refused(value, "is an iterable, iterator or stream but not a collection");
        } else {
            object(properties(value), out, depth);
        }
    }

    private static IllegalArgumentException refused(Object value, String why) {
        return new IllegalArgumentException("idempotency key content: "
                + value.getClass().getName() + " " + why + "; pass a List to keep an order or a Set to ignore it");
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
                        + (entry.getKey() == null
                                ? "null"
                                : entry.getKey().getClass().getName()));
            }
            if (sorted.containsKey(key)) {
                throw new IllegalArgumentException("idempotency key content: a "
                        + map.getClass().getName() + " holds the key \"" + key + "\" twice");
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
            throw new IllegalArgumentException(
                    "idempotency key content: a number is out of range for a key (" + e.getMessage() + ")", e);
        }
    }

    private static BigDecimal decimal(Number number) {
        if (number instanceof BigDecimal d) {
            return d;
        } else if (number instanceof BigInteger i) {
            return new BigDecimal(i);
        } else if (number instanceof Float f) {
            finite(f);
            return new BigDecimal(f.toString()); // the float's own decimal: 0.1f is 0.1, not 0.10000000149011612
        } else if (number instanceof Double || number instanceof DoubleAdder || number instanceof DoubleAccumulator) {
            return BigDecimal.valueOf(finite(number.doubleValue()));
        } else if (number instanceof Long
                || number instanceof Integer
                || number instanceof Short
                || number instanceof Byte
                || number instanceof AtomicLong
                || number instanceof AtomicInteger
                || number instanceof LongAdder
                || number instanceof LongAccumulator) {
            return BigDecimal.valueOf(number.longValue());
        }
        throw new IllegalArgumentException(
                "idempotency key content: " + number.getClass().getName()
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
                Object properties =
                        call(nodeClass, node, "properties", "fields"); // a Set, or an Iterator before Jackson 2.15
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
            case "NUMBER" -> write(call(nodeClass, node, "numberValue"), out, depth);
            case "BOOLEAN" -> write(call(nodeClass, node, "booleanValue"), out, depth);
            case "BINARY" -> write(call(nodeClass, node, "binaryValue"), out, depth);
            case "POJO" -> write(call(node.getClass(), node, "getPojo"), out, depth + 1);
            case "NULL", "MISSING" -> out.append("null");
            default ->
                throw new IllegalArgumentException("idempotency key content: a Jackson node of type " + type
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
        throw new IllegalArgumentException(
                "idempotency key content: " + target.getClass().getName() + " has none of " + List.of(names)
                        + "; pass mapper.convertValue(node, Map.class)");
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
            if (method.getParameterCount() != 0
                    || Modifier.isStatic(method.getModifiers())
                    || method.getDeclaringClass() == Object.class) {
                continue;
            }
            String name = method.getName();
            String property = name.startsWith("get") && name.length() > 3
                    ? name.substring(3)
                    : name.startsWith("is") && name.length() > 2 && (method.getReturnType() == boolean.class)
                            ? name.substring(2)
                            : null;
            if (property != null) {
                fields.put(Character.toLowerCase(property.charAt(0)) + property.substring(1), invoke(method, bean));
            }
        }
        if (fields.isEmpty()) {
            throw new IllegalArgumentException(
                    "idempotency key content: " + bean.getClass().getName()
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
            throw new IllegalArgumentException(
                    "idempotency key content: cannot read " + accessor.getName() + " of "
                            + target.getClass().getName(),
                    e);
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (unpaired(text, i)) {
                // UTF-8 would make it '?'; a backslash in the text is always doubled, so this cannot be mistaken for
                // text
                out.append("\\u").append(HexFormat.of().withUpperCase().toHexDigits(c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    static boolean unpaired(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 == text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
    }
}
