package io.cerberus.zookeeper;

import io.cerberus.spi.IdempotencyRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An idempotency record as its node holds it. Format 1, big-endian ({@link DataOutputStream}):
 * format byte {@code 1}; state byte (0 IN_PROGRESS, 1 COMPLETED); failure byte (0, 1); expiry
 * length in ms as a long (the lease of an IN_PROGRESS record, the retention of a COMPLETED one,
 * {@code -1}: for ever), counted from the node's {@code mtime}; token and fingerprint as modified
 * UTF-8 ({@code writeUTF}); result length as an int ({@code -1}: none) and the result bytes.
 *
 * @param expiryMillis how long after the node's last write the record ends; -1 never
 */
record StoredRecord(
        boolean completed, String token, String fingerprint, byte[] result, boolean failure, long expiryMillis) {
    static final byte FORMAT = 1;
    /** Bytes of a record besides its result, token and fingerprint. */
    static final int FIXED_BYTES = 1 + 1 + 1 + 8 + 2 + 2 + 4;

    static StoredRecord inProgress(String token, String fingerprint, long leaseMillis) {
        return new StoredRecord(false, token, fingerprint, null, false, leaseMillis);
    }

    StoredRecord renewed(long leaseMillis) {
        return new StoredRecord(false, token, fingerprint, null, false, leaseMillis);
    }

    StoredRecord completedWith(byte[] value, boolean failed, long retentionMillis) {
        return new StoredRecord(true, token, fingerprint, value, failed, retentionMillis);
    }

    IdempotencyRecord record() {
        return new IdempotencyRecord(completed, token, fingerprint, result, failure);
    }

    byte[] encode() {
        ByteArrayOutputStream bytes =
                new ByteArrayOutputStream(FIXED_BYTES + 128 + (result == null ? 0 : result.length));
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            out.writeByte(completed ? 1 : 0);
            out.writeByte(failure ? 1 : 0);
            out.writeLong(expiryMillis);
            out.writeUTF(token);
            out.writeUTF(fingerprint);
            out.writeInt(result == null ? -1 : result.length);
            if (result != null) {
                out.write(result);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * @param data a record node's data
     * @param path the node, for the message
     * @throws IllegalStateException if the data is not a record of a format this version knows
     */
    static StoredRecord decode(byte[] data, String path) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data == null ? new byte[0] : data))) {
            int format = in.readUnsignedByte();
            if (format != FORMAT) {
                throw new IllegalStateException("the idempotency record " + path + " has format " + format
                        + ", this version of Cerberus reads format " + FORMAT + " (was it written by a newer one?)");
            }
            boolean completed = in.readUnsignedByte() == 1;
            boolean failure = in.readUnsignedByte() == 1;
            long expiry = in.readLong();
            String token = in.readUTF();
            String fingerprint = in.readUTF();
            int length = in.readInt();
            byte[] result = length < 0 ? null : in.readNBytes(length);
            if (result != null && result.length != length) {
                throw new IOException("the result is cut short");
            }
            return new StoredRecord(completed, token, fingerprint, result, failure, expiry);
        } catch (IOException e) {
            throw new IllegalStateException("the idempotency record " + path + " is damaged: " + e.getMessage(), e);
        }
    }
}
