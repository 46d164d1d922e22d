package io.cerberus.spring;

import io.cerberus.idempotency.ResultCodec;
import io.cerberus.jackson.JacksonCodec;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Stores an {@link Idempotent @Idempotent} method's result as JSON with the class it had, so a
 * duplicate gets that class back: a subclass of the declared return type keeps its class and
 * fields, an interface or {@code Object} return type replays as what was returned,
 * {@code ResponseEntity<T>} keeps status, headers and a body of its own class, {@code Optional<T>}
 * its content. Written with Jackson 3 (the application's {@code JsonMapper} on Spring Boot 4);
 * {@link ResultJson} writes and reads the same layout with Jackson 2. Thread-safe.
 *
 * <p>Layout: {@code {"@class": "<class name>", "@value": <the value as that class>}}, with no
 * {@code @class} when the declared type says it all (the same class, a collection, a map, an
 * array: their element types come from the declared type). A {@code ResponseEntity}'s
 * {@code @value} is {@code {"status", "headers", "body": <layout>}}, an {@code Optional}'s the
 * layout of its content or null; a null result is no bytes. A record without this layout (plain
 * JSON of the declared type, as earlier versions stored) is read as the declared type.
 *
 * <p>Which class a stored name may stand for is {@link StoredClasses}'s rule; anything else is
 * refused (IllegalStateException). The same rule decides on writing whether the class is stored,
 * so what is written reads back; a result outside it is written as the declared type, as plain
 * JSON would be, and logged once.
 */
final class ResultJson implements ResultCodec<Object> {
    private static final ObjectMapper DEFAULT =
            compatible(JsonMapper.builder().findAndAddModules().build());
    private static final String CLASS = "@class";
    private static final String VALUE = "@value";
    private static final String RESPONSE_ENTITY = "org.springframework.http.ResponseEntity";
    private final ObjectMapper mapper;
    private final JavaType declared;
    private final StoredClasses classes;
    private final String method;

    /** With a mapper of the defaults. */
    ResultJson(Method method) {
        this(method, DEFAULT);
    }

    /** @param mapper the mapper to write and read with, as {@link #compatible(ObjectMapper)} made it */
    ResultJson(Method method, ObjectMapper mapper) {
        this.mapper = mapper;
        this.declared = mapper.constructType(Invocations.resultType(method));
        this.classes = new StoredClasses(method);
        this.method = classes.method();
    }

    /** @return a copy of the application's mapper that reads what Jackson 2 stored ({@link JacksonCodec#compatible}) */
    static ObjectMapper compatible(ObjectMapper applications) {
        return JacksonCodec.compatible(applications);
    }

    @Override
    public byte[] encode(Object value) {
        if (value == null) {
            return new byte[0];
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JsonGenerator out = mapper.createGenerator(bytes)) {
            write(out, value, declared);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(
                    "the result of " + method + " (" + value.getClass().getName() + ") cannot be written as JSON: "
                            + e.getMessage(),
                    e);
        }
        return bytes.toByteArray();
    }

    @Override
    public Object decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        try (JsonParser in = mapper.createParser(bytes)) {
            if (in.nextToken() == JsonToken.START_OBJECT
                    && in.nextToken() == JsonToken.PROPERTY_NAME
                    && (CLASS.equals(in.currentName()) || VALUE.equals(in.currentName()))) {
                return fields(in, declared);
            }
            return mapper.readerFor(declared).readValue(bytes);
        } catch (JacksonException e) {
            throw new IllegalStateException(
                    "the stored result of " + method + " cannot be read as " + declared.toCanonical()
                            + " (was the class changed incompatibly since it was stored?): " + e.getMessage(),
                    e);
        }
    }

    /** Writes the layout ({@link ResultJson}) of a value of this declared type. */
    void write(JsonGenerator out, Object value, JavaType type) {
        if (value == null) {
            out.writeNull();
            return;
        }
        out.writeStartObject();
        Class<?> raw = type.getRawClass();
        if (raw == Optional.class) {
            out.writeName(VALUE);
            write(out, ((Optional<?>) value).orElse(null), type.containedTypeOrUnknown(0));
        } else if (raw.getName().equals(RESPONSE_ENTITY)) {
            out.writeName(VALUE);
            ResponseEntities.write(this, out, value, type.containedTypeOrUnknown(0));
        } else {
            Class<?> stored = classes.storedClass(value.getClass(), raw, declared.toCanonical());
            if (stored != null) {
                out.writeStringProperty(CLASS, stored.getName());
            }
            out.writeName(VALUE);
            mapper.writerFor(stored == null ? type : specialized(type, stored)).writeValue(out, value);
        }
        out.writeEndObject();
    }

    /** Reads the layout of a value of this declared type: null, or an object (the current token). */
    Object read(JsonParser in, JavaType type) {
        if (in.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        expect(in, JsonToken.START_OBJECT);
        in.nextToken();
        return fields(in, type);
    }

    private Object fields(JsonParser in, JavaType type) {
        String stored = null;
        Object value = null;
        for (; in.currentToken() == JsonToken.PROPERTY_NAME; in.nextToken()) {
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

    private Object value(JsonParser in, JavaType type, String stored) {
        Class<?> raw = type.getRawClass();
        if (raw == Optional.class) {
            return Optional.ofNullable(read(in, type.containedTypeOrUnknown(0)));
        }
        if (raw.getName().equals(RESPONSE_ENTITY)) {
            return ResponseEntities.read(this, in, type.containedTypeOrUnknown(0));
        }
        return mapper.readerFor(
                        stored == null ? type : specialized(type, classes.resolve(stored, raw, declared.toCanonical())))
                .readValue(in);
    }

    private static void expect(JsonParser in, JsonToken token) {
        if (in.currentToken() != token) {
            throw new StreamReadException(in, "expected " + token + ", found " + in.currentToken());
        }
    }

    private JavaType specialized(JavaType type, Class<?> actual) {
        if (type.getRawClass() == actual) {
            return type;
        }
        // keeps the declared type's parameters: List<Receipt> declared, ArrayList returned: ArrayList<Receipt>
        return type.isPrimitive()
                ? mapper.constructType(actual)
                : mapper.getTypeFactory().constructSpecializedType(type, actual);
    }

    /** Keeps spring-web optional: loaded only for a method that returns a ResponseEntity. */
    private static final class ResponseEntities {
        private static final TypeReference<LinkedHashMap<String, List<String>>> HEADERS = new TypeReference<>() {};

        static void write(ResultJson json, JsonGenerator out, Object value, JavaType bodyType) {
            org.springframework.http.ResponseEntity<?> entity = (org.springframework.http.ResponseEntity<?>) value;
            Map<String, List<String>> headers = new LinkedHashMap<>();
            entity.getHeaders().forEach((name, values) -> headers.put(name, List.copyOf(values)));
            out.writeStartObject();
            out.writeNumberProperty("status", entity.getStatusCode().value());
            out.writeName("headers");
            json.mapper.writeValue(out, headers);
            out.writeName("body");
            json.write(out, entity.getBody(), bodyType);
            out.writeEndObject();
        }

        static Object read(ResultJson json, JsonParser in, JavaType bodyType) {
            expect(in, JsonToken.START_OBJECT);
            int status = 200;
            org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
            Object body = null;
            while (in.nextToken() == JsonToken.PROPERTY_NAME) {
                String field = in.currentName();
                in.nextToken();
                switch (field) {
                    case "status" -> status = in.getIntValue();
                    case "headers" ->
                        json.mapper
                                .readerFor(HEADERS)
                                .<Map<String, List<String>>>readValue(in)
                                .forEach(headers::addAll);
                    case "body" -> body = json.read(in, bodyType);
                    default -> in.skipChildren();
                }
            }
            return org.springframework.http.ResponseEntity.status(status)
                    .headers(headers)
                    .body(body);
        }
    }
}
