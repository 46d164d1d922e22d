package io.cerberus.idempotency;

import java.nio.charset.StandardCharsets;

/**
 * Turns an operation's result into stored bytes and back, so duplicates get the first result.
 * Never Java serialization. {@link #STRING} and {@link #BYTES} are built in; write one for your
 * types (JSON through your mapper, for instance).
 *
 * @param <T> the result type
 */
public interface ResultCodec<T> {
    /** UTF-8 text; a null result is stored as no bytes and replayed as null. */
    ResultCodec<String> STRING = new ResultCodec<>() {
        @Override
        public byte[] encode(String value) {
            return value == null ? new byte[0] : value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            return bytes == null || bytes.length == 0 ? null : new String(bytes, StandardCharsets.UTF_8);
        }
    };

    /** Bytes as they are. */
    ResultCodec<byte[]> BYTES = new ResultCodec<>() {
        @Override
        public byte[] encode(byte[] value) {
            return value == null ? new byte[0] : value.clone();
        }

        @Override
        public byte[] decode(byte[] bytes) {
            return bytes == null ? new byte[0] : bytes.clone();
        }
    };

    byte[] encode(T value);

    T decode(byte[] bytes);
}
