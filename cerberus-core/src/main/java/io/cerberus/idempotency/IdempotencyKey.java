package io.cerberus.idempotency;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What identifies one business operation: an operation name and its content, hashed (SHA-256) into
 * a versioned id ({@code v1:HEX}), and a fingerprint of the payload that a reused key must match.
 *
 * <p>Content is canonical: map keys and record components are sorted, numbers are compared by
 * value ({@code 1}, {@code 1L} and {@code 1.0} are one number), lists keep their order. Accepted:
 * {@code null}, strings, characters, booleans, numbers, enums, byte arrays, maps with string keys,
 * collections, arrays, records, and other objects through their public getters
 * ({@code getX()}, {@code isX()}).
 *
 * <pre>{@code
 * IdempotencyKey.ofContent("charge", Map.of("order", 42, "amount", 10.0))   // the content is the key
 * IdempotencyKey.of("charge", requestIdempotencyKeyHeader, requestBody)      // a client's key, checked against the body
 * }</pre>
 */
public final class IdempotencyKey {
    private static final String VERSION = "v1:";

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
     * @param operation the operation name, 1 to 256 characters
     * @param content what the operation acts on (see the accepted types above)
     * @return the key
     * @throws IllegalArgumentException if the operation name is empty or too long, or the content has an unsupported type
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
     * @param operation the operation name, 1 to 256 characters
     * @param clientKey the client's key, 1 to 512 characters
     * @param payload the request's content
     * @return the key
     * @throws IllegalArgumentException if a name breaks its rule or the payload has an unsupported type
     */
    public static IdempotencyKey of(String operation, String clientKey, Object payload) {
        Objects.requireNonNull(clientKey, "clientKey");
        if (clientKey.isEmpty() || clientKey.length() > 512) {
            throw new IllegalArgumentException("an idempotency key must have 1 to 512 characters, had " + clientKey.length());
        }
        return new IdempotencyKey(checkOperation(operation), hash(operation + "\u0000key\u0000" + clientKey), hash(canonical(payload)));
    }

    private static String checkOperation(String operation) {
        if (operation == null || operation.isEmpty() || operation.length() > 256) {
            throw new IllegalArgumentException("an operation name must have 1 to 256 characters, was "
                    + (operation == null ? "null" : operation.length() + " long"));
        }
        return operation;
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
        } else if (value instanceof Map<?, ?> map) {
            TreeMap<String, Object> sorted = new TreeMap<>();
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!(entry.getKey() instanceof String key)) {
                    throw new IllegalArgumentException("idempotency key content: map keys must be strings, found "
                            + (entry.getKey() == null ? "null" : entry.getKey().getClass().getName()));
                }
                sorted.put(key, entry.getValue());
            }
            object(sorted, out, depth);
        } else if (value instanceof Collection<?> list) {
            array(list.toArray(), out, depth);
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
        } else {
            object(properties(value), out, depth);
        }
    }

    private static String number(Number number) {
        BigDecimal decimal;
        if (number instanceof BigDecimal d) {
            decimal = d;
        } else if (number instanceof BigInteger i) {
            decimal = new BigDecimal(i);
        } else if (number instanceof Double || number instanceof Float) {
            double d = number.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("idempotency key content: " + d + " is not a number a key can hold");
            }
            decimal = BigDecimal.valueOf(d);
        } else {
            decimal = BigDecimal.valueOf(number.longValue());
        }
        decimal = decimal.stripTrailingZeros();
        return decimal.signum() == 0 ? "0" : decimal.toPlainString();
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
                    + " is not a supported type (strings, numbers, booleans, enums, byte[], maps, collections, arrays, records,"
                    + " objects with getters)");
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
                out.append('\\');
            }
            out.append(c);
        }
        out.append('"');
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
