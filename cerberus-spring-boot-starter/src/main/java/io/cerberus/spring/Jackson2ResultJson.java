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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link ResultJson} for applications on Jackson 2 (Spring Boot 3): the same layout, written and
 * read with Jackson 2, so records move between the two. Thread-safe.
 */
final class Jackson2ResultJson implements ResultCodec<Object> {
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
    Jackson2ResultJson(Method method) {
        this(method, DEFAULT);
    }

    /** @param mapper the mapper to write and read with, as {@link #compatible(ObjectMapper)} made it */
    Jackson2ResultJson(Method method, ObjectMapper mapper) {
        this.mapper = mapper;
        this.declared = mapper.constructType(Invocations.resultType(method));
        this.classes = new StoredClasses(method);
        this.method = classes.method();
    }

    /** @return a copy of the application's mapper that ignores unknown properties (fields removed since a result was stored) */
    static ObjectMapper compatible(ObjectMapper applications) {
        return applications.copy().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    @Override
    public byte[] encode(Object value) {
        if (value == null) {
            return new byte[0];
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JsonGenerator out = mapper.createGenerator(bytes)) {
            write(out, value, declared);
        } catch (IOException e) {
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
                    && in.nextToken() == JsonToken.FIELD_NAME
                    && (CLASS.equals(in.currentName()) || VALUE.equals(in.currentName()))) {
                return fields(in, declared);
            }
            return mapper.readerFor(declared).readValue(bytes);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "the stored result of " + method + " cannot be read as " + declared.toCanonical()
                            + " (was the class changed incompatibly since it was stored?): " + e.getMessage(),
                    e);
        }
    }

    /** Writes the layout ({@link ResultJson}) of a value of this declared type. */
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
            Class<?> stored = classes.storedClass(value.getClass(), raw, declared.toCanonical());
            if (stored != null) {
                out.writeStringField(CLASS, stored.getName());
            }
            out.writeFieldName(VALUE);
            mapper.writerFor(stored == null ? type : specialized(type, stored)).writeValue(out, value);
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
        return mapper.readerFor(
                        stored == null ? type : specialized(type, classes.resolve(stored, raw, declared.toCanonical())))
                .readValue(in);
    }

    private static void expect(JsonParser in, JsonToken token) throws IOException {
        if (in.currentToken() != token) {
            throw new IOException("expected " + token + ", found " + in.currentToken() + " at " + in.currentLocation());
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

        static void write(Jackson2ResultJson json, JsonGenerator out, Object value, JavaType bodyType)
                throws IOException {
            org.springframework.http.ResponseEntity<?> entity = (org.springframework.http.ResponseEntity<?>) value;
            Map<String, List<String>> headers = new LinkedHashMap<>();
            entity.getHeaders().forEach((name, values) -> headers.put(name, List.copyOf(values)));
            out.writeStartObject();
            out.writeNumberField("status", entity.getStatusCode().value());
            out.writeFieldName("headers");
            json.mapper.writeValue(out, headers);
            out.writeFieldName("body");
            json.write(out, entity.getBody(), bodyType);
            out.writeEndObject();
        }

        static Object read(Jackson2ResultJson json, JsonParser in, JavaType bodyType) throws IOException {
            expect(in, JsonToken.START_OBJECT);
            int status = 200;
            org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
            Object body = null;
            while (in.nextToken() == JsonToken.FIELD_NAME) {
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
