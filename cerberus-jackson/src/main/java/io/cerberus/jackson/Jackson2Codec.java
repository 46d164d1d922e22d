package io.cerberus.jackson;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.cerberus.idempotency.ResultCodec;
import java.io.IOException;
import java.lang.reflect.Type;

/**
 * {@link JacksonCodec} for applications on Jackson 2 ({@code com.fasterxml.jackson.databind}):
 * stores an idempotency result as JSON (UTF-8) and reads it back as the same type. A null result
 * is stored as no bytes and replayed as null. Thread-safe.
 *
 * <p>The JSON is the same as {@link JacksonCodec}'s, so records written by one are read by the
 * other: an application can move from Jackson 2 to Jackson 3 with its stored results. The default
 * mapper registers the Jackson modules found on the class path (java.time, JDK 8 types when their
 * modules are there) and ignores unknown properties, so a result stored by an older version of a
 * class still replays after a field was removed. Pass your own mapper to share the application's
 * settings. {@link ResultCodec#json(Class)} uses this codec only when Jackson 3 is not on the
 * class path.
 *
 * <pre>{@code
 * guard.execute(key, Duration.ofDays(1), Jackson2Codec.of(Receipt.class), () -> payments.charge(order));
 * }</pre>
 *
 * @param <T> the result type
 */
public final class Jackson2Codec<T> implements ResultCodec<T> {
    private static final ObjectMapper DEFAULT = JsonMapper.builder()
            .findAndAddModules()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final ObjectMapper mapper;
    private final JavaType type;

    private Jackson2Codec(ObjectMapper mapper, Type type) {
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
    public static <T> Jackson2Codec<T> of(Class<T> type) {
        return new Jackson2Codec<>(DEFAULT, type);
    }

    /** @return a codec for this generic type ({@code new TypeReference<List<Order>>() {}}) with the default mapper */
    public static <T> Jackson2Codec<T> of(TypeReference<T> type) {
        return new Jackson2Codec<>(DEFAULT, type == null ? null : type.getType());
    }

    /** @return a codec for this class with the application's mapper */
    public static <T> Jackson2Codec<T> of(ObjectMapper mapper, Class<T> type) {
        return new Jackson2Codec<>(mapper, type);
    }

    /** @return a codec for this generic type with the application's mapper */
    public static <T> Jackson2Codec<T> of(ObjectMapper mapper, TypeReference<T> type) {
        return new Jackson2Codec<>(mapper, type == null ? null : type.getType());
    }

    static <T> Jackson2Codec<T> forType(Type type) {
        return new Jackson2Codec<>(DEFAULT, type);
    }

    @Override
    public byte[] encode(T value) {
        if (value == null) {
            return new byte[0];
        }
        try {
            return mapper.writerFor(type).writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
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
        } catch (IOException e) {
            throw new IllegalStateException(
                    "the stored result cannot be read as " + type + " (was the class changed"
                            + " incompatibly since it was stored?): " + e.getMessage(),
                    e);
        }
    }

    @Override
    public String toString() {
        return "Jackson2Codec[" + type + "]";
    }
}
