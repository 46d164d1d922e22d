package io.cerberus.spring;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Operation names that fit the 256 characters of {@link io.cerberus.idempotency.IdempotencyKey}
 * without losing what sets them apart: a longer name keeps its beginning, for people, and ends
 * with the SHA-256 of the whole name, so two long names that differ anywhere stay two operations.
 */
final class OperationNames {
    /** The longest operation name {@link io.cerberus.idempotency.IdempotencyKey} takes. */
    static final int MAX = 256;

    private OperationNames() {}

    /**
     * @param name an operation name of any length
     * @return the name itself when it fits; otherwise its beginning, {@code #} and the SHA-256 of
     *     the whole name in hex, 256 characters in all (a surrogate pair is never split)
     */
    static String fit(String name) {
        if (name.length() <= MAX) {
            return name;
        }
        String hash = sha256Hex(name);
        int keep = MAX - hash.length() - 1;
        if (Character.isHighSurrogate(name.charAt(keep - 1))) {
            keep--;
        }
        return name.substring(0, keep) + "#" + hash;
    }

    /** @return the SHA-256 of the text's UTF-8 bytes, in lower-case hex */
    static String sha256Hex(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
