package io.cerberus.spring;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.cerberus.idempotency.ResultCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ClassUtils;

/**
 * Stores an {@link Idempotent @Idempotent} method's result as JSON with the class it had, so a
 * duplicate gets that class back: a subclass of the declared return type keeps its class and
 * fields, an interface or {@code Object} return type replays as what was returned,
 * {@code ResponseEntity<T>} keeps status, headers and a body of its own class, {@code Optional<T>}
 * its content. Thread-safe.
 *
 * <p>Layout: {@code {"@class": "<class name>", "@value": <the value as that class>}}, with no
 * {@code @class} when the declared type says it all (the same class, a collection, a map, an
 * array: their element types come from the declared type). A {@code ResponseEntity}'s
 * {@code @value} is {@code {"status", "headers", "body": <layout>}}, an {@code Optional}'s the
 * layout of its content or null; a null result is no bytes. A record without this layout (plain
 * JSON of the declared type, as earlier versions stored) is read as the declared type.
 *
 * <p>Stored data never chooses an arbitrary class: a stored class name is resolved by the
 * method's class loader without initializing the class, and used only if it is assignable to
 * the declared return type; under a JDK type ({@code Object}, {@code Serializable},
 * {@code Number}...) it must also be a record, an enum, or a JDK value (String, a boxed primitive,
 * BigDecimal, BigInteger, UUID, java.time). Anything else is refused (IllegalStateException). The
 * same rule decides on writing whether the class is stored, so what is written reads back; a
 * result outside it is written as the declared type, as plain JSON would be, and logged once.
 */
final class ResultJson implements ResultCodec<Object> {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotentAspect.class);
    private static final ObjectMapper MAPPER = JsonMapper.builder().findAndAddModules()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    private static final String CLASS = "@class";
    private static final String VALUE = "@value";
    private static final String RESPONSE_ENTITY = "org.springframework.http.ResponseEntity";
    private static final Set<Class<?>> JDK_VALUES = Set.of(String.class, Boolean.class, Character.class, Byte.class, Short.class,
            Integer.class, Long.class, Float.class, Double.class, BigDecimal.class, BigInteger.class, UUID.class);

    private final JavaType declared;
    private final ClassLoader loader;
    private final String method;
    private final Set<Class<?>> warned = ConcurrentHashMap.newKeySet();

    ResultJson(Method method) {
        this.declared = MAPPER.constructType(method.getGenericReturnType());
        this.loader = method.getDeclaringClass().getClassLoader();
        this.method = Invocations.describe(method);
    }

    @Override
    public byte[] encode(Object value) {
        if (value == null) {
            return new byte[0];
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JsonGenerator out = MAPPER.createGenerator(bytes)) {
            write(out, value, declared);
        } catch (IOException e) {
            throw new IllegalArgumentException("the result of " + method + " (" + value.getClass().getName()
                    + ") cannot be written as JSON: " + e.getMessage(), e);
        }
        return bytes.toByteArray();
    }

    @Override
    public Object decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        try (JsonParser in = MAPPER.createParser(bytes)) {
            if (in.nextToken() == JsonToken.START_OBJECT && in.nextToken() == JsonToken.FIELD_NAME
                    && (CLASS.equals(in.currentName()) || VALUE.equals(in.currentName()))) {
                return fields(in, declared);
            }
            return MAPPER.readerFor(declared).readValue(bytes);
        } catch (IOException e) {
            throw new IllegalStateException("the stored result of " + method + " cannot be read as " + declared.toCanonical()
                    + " (was the class changed incompatibly since it was stored?): " + e.getMessage(), e);
        }
    }

    /** Writes the layout of a value of this declared type. */
    void write(JsonGenerator out, Object value, JavaType type) throws IOException {
        if (value == null) {
            out.writeNull();
            return;
        }
        out.writeStartObject();
        Class<?> raw = type.getRawClass();
        if (raw == Optional.class) {
            out.writeFieldName(VALUE);
            write(out, ((Optional<?>) value).orElse(null), type.containedTypeOrUnknown(0));
        } else if (raw.getName().equals(RESPONSE_ENTITY)) {
            out.writeFieldName(VALUE);
            ResponseEntities.write(this, out, value, type.containedTypeOrUnknown(0));
        } else {
            Class<?> stored = storedClass(value.getClass(), raw);
            if (stored != null) {
                out.writeStringField(CLASS, stored.getName());
            }
            out.writeFieldName(VALUE);
            MAPPER.writerFor(stored == null ? type : specialized(type, stored)).writeValue(out, value);
        }
        out.writeEndObject();
    }

    /** Reads the layout of a value of this declared type: null, or an object (the current token). */
    Object read(JsonParser in, JavaType type) throws IOException {
        if (in.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        expect(in, JsonToken.START_OBJECT);
        in.nextToken();
        return fields(in, type);
    }

    private Object fields(JsonParser in, JavaType type) throws IOException {
        String stored = null;
        Object value = null;
        for (; in.currentToken() == JsonToken.FIELD_NAME; in.nextToken()) {
            String field = in.currentName();
            in.nextToken();
            if (CLASS.equals(field)) {
                stored = in.getValueAsString();
            } else if (VALUE.equals(field)) {
                value = value(in, type, stored);
            } else {
                in.skipChildren();
            }
        }
        expect(in, JsonToken.END_OBJECT);
        return value;
    }

    private Object value(JsonParser in, JavaType type, String stored) throws IOException {
        Class<?> raw = type.getRawClass();
        if (raw == Optional.class) {
            return Optional.ofNullable(read(in, type.containedTypeOrUnknown(0)));
        }
        if (raw.getName().equals(RESPONSE_ENTITY)) {
            return ResponseEntities.read(this, in, type.containedTypeOrUnknown(0));
        }
        return MAPPER.readerFor(stored == null ? type : specialized(type, resolve(stored, raw))).readValue(in);
    }

    private static void expect(JsonParser in, JsonToken token) throws IOException {
        if (in.currentToken() != token) {
            throw new IOException("expected " + token + ", found " + in.currentToken() + " at " + in.currentLocation());
        }
    }

    /** @return the class to store with a result, or null to write it as its declared type */
    private Class<?> storedClass(Class<?> actual, Class<?> declaredRaw) {
        Class<?> expected = ClassUtils.resolvePrimitiveIfNecessary(declaredRaw);
        Class<?> user = ClassUtils.getUserClass(actual);
        if (user == expected || user.isArray() || Collection.class.isAssignableFrom(user) || Map.class.isAssignableFrom(user)) {
            return null;
        }
        if (!readable(user, expected) || !resolvable(user)) {
            if (warned.add(user)) {
                LOG.warn("{} returned an instance of {}, which is stored as JSON of the declared return type {}: a duplicate"
                        + " gets what JSON makes of that (a map, for Object); declare a closer return type, or return a record",
                        method, user.getName(), declared.toCanonical());
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
     * @return the class a stored name stands for
     * @throws IllegalStateException if it is missing or not one this method may return
     */
    private Class<?> resolve(String name, Class<?> declaredRaw) {
        Class<?> expected = ClassUtils.resolvePrimitiveIfNecessary(declaredRaw);
        if (name.equals(expected.getName())) {
            return expected;
        }
        Class<?> found;
        try {
            found = Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("the stored result of " + method + " is a " + name + ", which this application"
                    + " does not have (was it renamed since?)", e);
        }
        if (!readable(found, expected)) {
            throw new IllegalStateException("the stored result of " + method + " names the class " + name + ", which is not a "
                    + declared.toCanonical() + " that can be read back; refused");
        }
        return found;
    }

    /** The one rule for a class named in stored data, on reading and on writing. */
    private static boolean readable(Class<?> type, Class<?> declaredRaw) {
        if (!declaredRaw.isAssignableFrom(type) || type.isAnonymousClass() || type.isLocalClass() || type.isSynthetic()
                || type.isHidden() || type.isInterface() || Modifier.isAbstract(type.getModifiers())
                || type.isMemberClass() && !Modifier.isStatic(type.getModifiers())) {
            return false;
        }
        if (!isJdk(declaredRaw)) {
            return true;
        }
        return type.isRecord() || type.isEnum()
                || Modifier.isPublic(type.getModifiers()) && (JDK_VALUES.contains(type) || type.getPackageName().equals("java.time"));
    }

    private static boolean isJdk(Class<?> type) {
        String name = type.getName();
        return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.");
    }

    private static JavaType specialized(JavaType type, Class<?> actual) {
        if (type.getRawClass() == actual) {
            return type;
        }
        // keeps the declared type's parameters: List<Receipt> declared, ArrayList returned: ArrayList<Receipt>
        return type.isPrimitive() ? MAPPER.constructType(actual) : MAPPER.getTypeFactory().constructSpecializedType(type, actual);
    }

    /** Keeps spring-web optional: loaded only for a method that returns a ResponseEntity. */
    private static final class ResponseEntities {
        private static final TypeReference<LinkedHashMap<String, List<String>>> HEADERS = new TypeReference<>() {
        };

        static void write(ResultJson json, JsonGenerator out, Object value, JavaType bodyType) throws IOException {
            org.springframework.http.ResponseEntity<?> entity = (org.springframework.http.ResponseEntity<?>) value;
            Map<String, List<String>> headers = new LinkedHashMap<>();
            entity.getHeaders().forEach((name, values) -> headers.put(name, List.copyOf(values)));
            out.writeStartObject();
            out.writeNumberField("status", entity.getStatusCode().value());
            out.writeFieldName("headers");
            MAPPER.writeValue(out, headers);
            out.writeFieldName("body");
            json.write(out, entity.getBody(), bodyType);
            out.writeEndObject();
        }

        static Object read(ResultJson json, JsonParser in, JavaType bodyType) throws IOException {
            expect(in, JsonToken.START_OBJECT);
            int status = 200;
            org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
            Object body = null;
            while (in.nextToken() == JsonToken.FIELD_NAME) {
                String field = in.currentName();
                in.nextToken();
                switch (field) {
                    case "status" -> status = in.getIntValue();
                    case "headers" -> MAPPER.readerFor(HEADERS).<Map<String, List<String>>>readValue(in).forEach(headers::addAll);
                    case "body" -> body = json.read(in, bodyType);
                    default -> in.skipChildren();
                }
            }
            return org.springframework.http.ResponseEntity.status(status).headers(headers).body(body);
        }
    }
}
