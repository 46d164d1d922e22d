package io.cerberus.etcd;

import io.cerberus.spi.IdempotencyRecord;
import io.etcd.jetcd.ByteSequence;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * The value of an idempotency record's key, binary and versioned:
 * {@code format(1) state(1) failure(1) claimLease(8) token(UTF) fingerprint(UTF) result(rest)}.
 * Format is 1; state 0 is IN_PROGRESS, 1 COMPLETED; claimLease is the etcd lease the claim was
 * granted (0 once completed), so any client can renew the claim from the value alone; UTF fields
 * are a 2-byte length and modified UTF-8 ({@link DataOutputStream#writeUTF}); the result, present
 * only when completed, is the rest of the value.
 */
final class IdempotencyValues {
    static final int FORMAT = 1;

    /**
     * The largest result stored: etcd refuses requests over 1.5 MiB ({@code --max-request-bytes}
     * default), and 8 KiB are kept for the key, token, fingerprint and transaction.
     */
    static final int MAX_RESULT_BYTES = 1536 * 1024 - 8 * 1024;

    /** A decoded value, with the lease of the claim that wrote it (0 once completed). */
    record Stored(IdempotencyRecord record, long claimLease) {
        boolean inProgressOf(String token) {
            return !record.completed() && record.token().equals(token);
        }

        boolean completedBy(String token) {
            return record.completed() && record.token().equals(token);
        }
    }

    private IdempotencyValues() {}

    static ByteSequence inProgress(String token, String fingerprint, long claimLease) {
        return encode(false, false, claimLease, token, fingerprint, new byte[0]);
    }

    static ByteSequence completed(String token, String fingerprint, byte[] result, boolean failure) {
        return encode(true, failure, 0, token, fingerprint, result);
    }

    private static ByteSequence encode(
            boolean completed, boolean failure, long claimLease, String token, String fingerprint, byte[] result) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + result.length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            out.writeByte(completed ? 1 : 0);
            out.writeByte(failure ? 1 : 0);
            out.writeLong(claimLease);
            out.writeUTF(token);
            out.writeUTF(fingerprint);
            out.write(result);
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return ByteSequence.from(bytes.toByteArray());
    }

    /**
     * @param value a record key's value
     * @return what it holds
     * @throws IllegalStateException if the value is of a format this client does not know
     */
    static Stored decode(ByteSequence value) {
        byte[] bytes = value.getBytes();
        if (bytes.length == 0 || bytes[0] != FORMAT) {
            throw new IllegalStateException("an idempotency record in etcd has format "
                    + (bytes.length == 0 ? "(empty)" : bytes[0]) + ", which this client does not know (it knows "
                    + FORMAT + "); is a newer Cerberus writing to the same prefix?");
        }
        try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes))) {
            in.readByte();
            boolean completed = in.readByte() == 1;
            boolean failure = in.readByte() == 1;
            long claimLease = in.readLong();
            String token = in.readUTF();
            String fingerprint = in.readUTF();
            byte[] result = completed ? Arrays.copyOfRange(bytes, bytes.length - in.available(), bytes.length) : null;
            return new Stored(new IdempotencyRecord(completed, token, fingerprint, result, failure), claimLease);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "an idempotency record in etcd is cut short (" + bytes.length + " bytes)", e);
        }
    }
}
