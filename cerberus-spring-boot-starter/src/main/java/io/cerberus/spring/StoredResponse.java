package io.cerberus.spring;

import io.cerberus.idempotency.ResultCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An HTTP response as {@link IdempotencyKeyFilter} stores it for duplicates: status, the selected
 * headers (in order, repeated names kept) and body.
 */
record StoredResponse(int status, List<Map.Entry<String, String>> headers, byte[] body) {
    /** Leads every stored response, so another layout can be told apart later. */
    private static final int FORMAT = 1;

    /**
     * Stores a response as bytes: the format number, status, header count, then name and value of
     * each header, then the body (a simple layout of its own; never Java serialization).
     */
    static final ResultCodec<StoredResponse> CODEC = new ResultCodec<>() {
        @Override
        public byte[] encode(StoredResponse response) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(response.body().length + 64);
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeByte(FORMAT);
                out.writeShort(response.status());
                out.writeShort(response.headers().size());
                for (Map.Entry<String, String> header : response.headers()) {
                    out.writeUTF(header.getKey());
                    out.writeUTF(header.getValue());
                }
                out.writeInt(response.body().length);
                out.write(response.body());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        @Override
        public StoredResponse decode(byte[] stored) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(stored))) {
                int format = in.readUnsignedByte();
                if (format != FORMAT) {
                    throw new IllegalArgumentException(
                            "a stored HTTP response has format " + format + "; this version reads " + FORMAT);
                }
                int status = in.readUnsignedShort();
                int count = in.readUnsignedShort();
                List<Map.Entry<String, String>> headers = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    headers.add(Map.entry(in.readUTF(), in.readUTF()));
                }
                byte[] body = new byte[in.readInt()];
                in.readFully(body);
                return new StoredResponse(status, List.copyOf(headers), body);
            } catch (IOException e) {
                throw new IllegalArgumentException("a stored HTTP response is truncated", e);
            }
        }
    };
}
