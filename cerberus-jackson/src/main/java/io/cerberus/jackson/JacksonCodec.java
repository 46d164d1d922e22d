package io.cerberus.jackson;

import io.cerberus.idempotency.ResultCodec;
import java.lang.reflect.Type;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.cfg.EnumFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Stores an idempotency result as JSON (UTF-8) through Jackson 3 ({@code tools.jackson.databind})
 * and reads it back as the same type. A null result is stored as no bytes and replayed as null.
 * Thread-safe. For Jackson 2, {@link Jackson2Codec} does the same.
 *
 * <p>The default mapper registers the Jackson modules found on the class path and reads what
 * {@link Jackson2Codec} and earlier versions of this module (on Jackson 2) wrote: unknown
 * properties are ignored (a result stored by an older version of a class still replays after a
 * field was removed), a missing or null primitive is its default, enums are written and read by
 * name (Jackson 3 would use {@code toString()}), dates stored as numbers are read. Pass your own
 * mapper to share the application's settings; {@link #compatible(ObjectMapper)} gives it these.
 *
 * <pre>{@code
 * guard.execute(key, Duration.ofDays(1), JacksonCodec.of(Receipt.class), () -> payments.charge(order));
 * }</pre>
 *
 * @param <T> the result type
 */
public final class JacksonCodec<T> implements ResultCodec<T> {
    private static final ObjectMapper DEFAULT =
            compatible(JsonMapper.builder().findAndAddModules().build());

    private final ObjectMapper mapper;
    private final JavaType type;

    private JacksonCodec(ObjectMapper mapper, Type type) {
        if (mapper == null) {
            throw new IllegalArgumentException("the mapper must not be null");
        }
        if (type == null) {
            throw new IllegalArgumentException("the type must not be null");
        }
        this.mapper = mapper;
        this.type = mapper.constructType(type);
    }

    /** @return a codec for this class with the default mapper */
    public static <T> JacksonCodec<T> of(Class<T> type) {
        return new JacksonCodec<>(DEFAULT, type);
    }

    /** @return a codec for this generic type ({@code new TypeReference<List<Order>>() {}}) with the default mapper */
    public static <T> JacksonCodec<T> of(TypeReference<T> type) {
        return new JacksonCodec<>(DEFAULT, type == null ? null : type.getType());
    }

    /** @return a codec for this class with the application's mapper, used as it is */
    public static <T> JacksonCodec<T> of(ObjectMapper mapper, Class<T> type) {
        return new JacksonCodec<>(mapper, type);
    }

    /** @return a codec for this generic type with the application's mapper, used as it is */
    public static <T> JacksonCodec<T> of(ObjectMapper mapper, TypeReference<T> type) {
        return new JacksonCodec<>(mapper, type == null ? null : type.getType());
    }

    /**
     * A copy of the application's mapper that reads what Jackson 2 stored, as Jackson 2 read it:
     * unknown properties ignored, a missing or null primitive as its default, enums by name, a value
     * read from within a larger document (no trailing-token check). The mapper given is not changed.
     *
     * @param mapper the application's mapper
     * @return the copy
     * @throws IllegalArgumentException if the mapper is null
     */
    public static ObjectMapper compatible(ObjectMapper mapper) {
        if (mapper == null) {
            throw new IllegalArgumentException("the mapper must not be null");
        }
        return mapper.rebuild()
                .disable(
                        DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES,
                        DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES,
                        DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(EnumFeature.READ_ENUMS_USING_TO_STRING, EnumFeature.WRITE_ENUMS_USING_TO_STRING)
                .build();
    }

    static <T> JacksonCodec<T> forType(Type type) {
        return new JacksonCodec<>(DEFAULT, type);
    }

    @Override
    public byte[] encode(T value) {
        if (value == null) {
            return new byte[0];
        }
        try {
            return mapper.writerFor(type).writeValueAsBytes(value);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(
                    "the result (" + value.getClass().getName() + ") cannot be written as JSON of " + type + ": "
                            + e.getOriginalMessage(),
                    e);
        }
    }

    @Override
    public T decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        try {
            return mapper.readValue(bytes, type);
        } catch (JacksonException e) {
            throw new IllegalStateException(
                    "the stored result cannot be read as " + type + " (was the class changed"
                            + " incompatibly since it was stored?): " + e.getMessage(),
                    e);
        }
    }

    @Override
    public String toString() {
        return "JacksonCodec[" + type + "]";
    }
}
