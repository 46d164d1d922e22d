package io.cerberus.idempotency;

import java.nio.charset.StandardCharsets;

/**
 * Turns an operation's result into stored bytes and back, so duplicates get the first result.
 * Never Java serialization. {@link #STRING} and {@link #BYTES} are built in; {@link #json(Class)}
 * stores JSON when a JSON provider is on the class path ({@code io.cerberus:cerberus-jackson});
 * or write one for your types.
 *
 * @param <T> the result type
 */
public interface ResultCodec<T> {
    /**
     * UTF-8 text. A null result is stored as no bytes, the empty text as the one byte {@code 0xFF}
     * (never the first byte of UTF-8), so each replays as itself.
     */
    ResultCodec<String> STRING = new ResultCodec<>() {
        @Override
        public byte[] encode(String value) {
            return value == null
                    ? new byte[0]
                    : value.isEmpty() ? new byte[] {Marks.EMPTY} : value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            if (bytes == null || bytes.length == 0) {
                return null;
            }
            return bytes[0] == Marks.EMPTY ? "" : new String(bytes, StandardCharsets.UTF_8);
        }
    };

    /**
     * Bytes as they are. A null result is stored as no bytes; a value that is empty or starts with
     * {@code 0xFF} is stored behind one {@code 0xFF}, so each replays as itself.
     */
    ResultCodec<byte[]> BYTES = new ResultCodec<>() {
        @Override
        public byte[] encode(byte[] value) {
            if (value == null) {
                return new byte[0];
            }
            if (value.length > 0 && value[0] != Marks.EMPTY) {
                return value.clone();
            }
            byte[] marked = new byte[value.length + 1];
            marked[0] = Marks.EMPTY;
            System.arraycopy(value, 0, marked, 1, value.length);
            return marked;
        }

        @Override
        public byte[] decode(byte[] bytes) {
            if (bytes == null || bytes.length == 0) {
                return null;
            }
            return bytes[0] == Marks.EMPTY ? java.util.Arrays.copyOfRange(bytes, 1, bytes.length) : bytes.clone();
        }
    };

    /**
     * A JSON codec for this type, from the {@link JsonCodecProvider} on the class
     * path ({@code io.cerberus:cerberus-jackson}, over Jackson).
     *
     * @param type the result type
     * @param <T> the result type
     * @return the codec
     * @throws IllegalStateException if no JSON provider is on the class path
     */
    static <T> ResultCodec<T> json(Class<T> type) {
        return jsonOf(type);
    }

    /**
     * Like {@link #json(Class)}, for a generic type ({@code List<Order>}: pass a
     * {@link java.lang.reflect.ParameterizedType}, e.g. from Jackson's {@code TypeReference.getType()}).
     *
     * @param type the result type
     * @param <T> the result type
     * @return the codec
     * @throws IllegalStateException if no JSON provider is on the class path
     */
    static <T> ResultCodec<T> jsonOf(java.lang.reflect.Type type) {
        if (type == null) {
            throw new IllegalArgumentException("the type must not be null");
        }
        for (JsonCodecProvider provider : java.util.ServiceLoader.load(JsonCodecProvider.class)) {
            return provider.codec(type);
        }
        throw new IllegalStateException(
                "no JSON codec on the class path: add the dependency io.cerberus:cerberus-jackson"
                        + " (it brings Jackson), or pass a ResultCodec of your own");
    }

    byte[] encode(T value);

    T decode(byte[] bytes);
}

/** The byte that marks an empty text (STRING) or a value stored behind a mark (BYTES). */
final class Marks {
    static final byte EMPTY = (byte) 0xFF;

    private Marks() {}
}
