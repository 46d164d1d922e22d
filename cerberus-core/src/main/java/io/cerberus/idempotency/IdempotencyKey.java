package io.cerberus.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * What identifies one business operation: an operation name and its content, hashed (SHA-256) into
 * a versioned id ({@code v1:HEX}), and a fingerprint of the payload that a reused key must match.
 * Immutable and thread-safe.
 *
 * <p>Content is hashed as canonical text, which equal content gets in every JVM:
 * <ul>
 * <li>Maps (string keys only), records and other objects through their public getters ({@code getX()},
 *     {@code isX()}) are written alike, names sorted: a record is the map of its components.
 * <li>Lists, deques and arrays keep their order; a {@link Set} is its elements sorted by their canonical
 *     text ({@code Set.of("b", "a")} is {@code List.of("a", "b")}). Other collections, iterables,
 *     iterators and streams are refused: pass a List or a Set.
 * <li>Numbers compare by value ({@code 1}, {@code 1L}, {@code 1.0}, {@code new BigDecimal("1.00")},
 *     {@code new AtomicLong(1)} are one number; a float or double is the decimal it prints as); one whose
 *     last digit is over 1000 places from the point is written {@code 1E+999999999}. {@code Number}
 *     types whose exact value cannot be read are refused.
 * <li>An {@code Optional} (and {@code OptionalInt}, ...) is its value, {@code null} when empty; a Jackson
 *     {@code JsonNode} (2.x or 3.x, read by reflection) is the JSON it holds.
 * <li>Strings, characters and enum names are quoted text (an unpaired surrogate is written
 *     <code>&#92;uD800</code>, not {@code ?}). Booleans, {@code null} and {@code byte[]} (hex) complete
 *     the list; anything else is refused.
 * </ul>
 * E.g. {@code ofContent("charge", Map.of("order", 42))} (the content is the key), or
 * {@code of("charge", idempotencyKeyHeader, requestBody)} (a client's key, checked against the body).
 */
public final class IdempotencyKey {
    private static final String VERSION = "v1:";

    private final String operation;
    private final String id;
    private final String fingerprint;

    private IdempotencyKey(String operation, String id, String fingerprint) {
        this.operation = operation;
        this.id = id;
        this.fingerprint = fingerprint;
    }

    /**
     * A key made of the content itself: the same operation with the same content is the same key.
     *
     * @param operation the operation name, 1 to 256 characters, no NUL, no unpaired surrogate
     * @param content what the operation acts on (see the accepted types above)
     * @return the key
     * @throws IllegalArgumentException if the operation name breaks its rule, or the content has an unsupported type
     */
    public static IdempotencyKey ofContent(String operation, Object content) {
        String canonical = canonical(content);
        return new IdempotencyKey(checkOperation(operation), hash(operation + "\u0000" + canonical), hash(canonical));
    }

    /**
     * A key chosen by the client (an {@code Idempotency-Key} header), with the payload it must keep
     * coming with: the same key with another payload is refused with
     * {@link IdempotencyKeyMismatchException}.
     *
     * @param operation the operation name, 1 to 256 characters, no NUL, no unpaired surrogate
     * @param clientKey the client's key, 1 to 512 characters, no unpaired surrogate
     * @param payload the request's content
     * @return the key
     * @throws IllegalArgumentException if a name breaks its rule or the payload has an unsupported type
     */
    public static IdempotencyKey of(String operation, String clientKey, Object payload) {
        Objects.requireNonNull(clientKey, "clientKey");
        if (clientKey.isEmpty() || clientKey.length() > 512) {
            throw new IllegalArgumentException(
                    "an idempotency key must have 1 to 512 characters, had " + clientKey.length());
        }
        checkWellFormed("an idempotency key", clientKey);
        return new IdempotencyKey(
                checkOperation(operation), hash(operation + "\u0000key\u0000" + clientKey), hash(canonical(payload)));
    }

    private static String checkOperation(String operation) {
        if (operation == null || operation.isEmpty() || operation.length() > 256) {
            throw new IllegalArgumentException("an operation name must have 1 to 256 characters, was "
                    + (operation == null ? "null" : operation.length() + " long"));
        }
        if (operation.indexOf(0) >= 0) {
            // NUL separates the operation from what follows it in the hashed text
            throw new IllegalArgumentException(
                    "an operation name must not contain NUL, had one at index " + operation.indexOf(0));
        }
        checkWellFormed("an operation name", operation);
        return operation;
    }

    /** UTF-8 turns an unpaired surrogate into '?', so such a name would share its hash with another. */
    private static void checkWellFormed(String what, String text) {
        for (int i = 0; i < text.length(); i++) {
            if (CanonicalContent.unpaired(text, i)) {
                throw new IllegalArgumentException(
                        what + " must not contain an unpaired surrogate, had one at index " + i);
            }
        }
    }

    /** @return the operation name */
    public String operation() {
        return operation;
    }

    /** @return the stored id: {@code v1:} and the SHA-256 of operation and content or client key, in hex */
    public String id() {
        return id;
    }

    /** @return the SHA-256 of the canonical payload, in hex */
    public String fingerprint() {
        return fingerprint;
    }

    /**
     * @param content a value
     * @return its canonical text (see {@link CanonicalContent})
     * @throws IllegalArgumentException for an unsupported type
     */
    static String canonical(Object content) {
        return CanonicalContent.of(content);
    }

    private static String hash(String text) {
        try {
            return VERSION
                    + HexFormat.of()
                            .formatHex(
                                    MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IdempotencyKey key && key.id.equals(id) && key.fingerprint.equals(fingerprint);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public String toString() {
        return "IdempotencyKey[" + operation + " " + id.substring(0, Math.min(id.length(), 15)) + "...]";
    }
}
