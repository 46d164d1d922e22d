package io.cerberus.local;

import io.cerberus.spi.LockKey;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Maps a lock (namespace, name) to the name of its file in the engine directory, and back.
 *
 * <p>File name = {@code part(namespace) + "." + part(name) + ".lock"}. A part keeps
 * {@code [a-z0-9_-]} as is and percent-encodes every other UTF-8 byte with upper-case hex, so it
 * never contains {@code /}, {@code .}, {@code \} or upper-case letters outside an escape: no path
 * traversal, an unambiguous namespace/name boundary, and distinct texts give names that differ
 * even on case-insensitive file systems ({@code "A"} is {@code %41}, {@code "a"} is {@code a}).
 * A part whose encoding is longer than {@link #MAX_PART} characters becomes a readable prefix of
 * the encoding, {@code ~} and the SHA-256 of the full text in lower-case hex; {@code ~} never
 * appears in an encoding, so hashed and plain parts cannot meet. File names are at most
 * {@link #MAX_FILE_NAME} ASCII characters, below the usual 255-byte limit.
 */
final class FileNames {
    /** The file-name suffix of every lock file. */
    static final String SUFFIX = ".lock";
    /** Longest part, plain or hashed. */
    static final int MAX_PART = 100;
    /** Longest file name. */
    static final int MAX_FILE_NAME = MAX_PART + 1 + MAX_PART + SUFFIX.length();

    private static final char HASH_MARK = '~';
    private static final int HASH_HEX = 64;
    private static final int HASHED_PREFIX = MAX_PART - 1 - HASH_HEX;
    private static final HexFormat UPPER_HEX = HexFormat.of().withUpperCase();

    private FileNames() {}

    /**
     * @param key a lock
     * @return the name of its file
     */
    static String fileName(LockKey key) {
        return namespacePrefix(key.namespace()) + part(key.name()) + SUFFIX;
    }

    /**
     * @param namespace a namespace
     * @return how the file names of its locks start
     */
    static String namespacePrefix(String namespace) {
        return part(namespace) + ".";
    }

    /**
     * Decodes the lock name from a file name of the namespace whose prefix is given.
     *
     * @param fileName a file name found in the directory
     * @param prefix {@link #namespacePrefix} of the namespace
     * @return the lock name; empty if the file is not a lock file of the namespace or its name part
     *     is hashed (then the name is read from the file)
     */
    static Optional<String> lockName(String fileName, String prefix) {
        String part = namePart(fileName, prefix);
        if (part == null || part.indexOf(HASH_MARK) >= 0) {
            return Optional.empty();
        }
        ByteBuffer bytes = ByteBuffer.allocate(part.length());
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (c == '%') {
                if (i + 2 >= part.length()) {
                    return Optional.empty();
                }
                int high = Character.digit(part.charAt(i + 1), 16);
                int low = Character.digit(part.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    return Optional.empty();
                }
                bytes.put((byte) (high << 4 | low));
                i += 2;
            } else {
                bytes.put((byte) c);
            }
        }
        bytes.flip();
        try {
            String name = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(bytes)
                    .toString();
            // only the canonical spelling is ours: a file named otherwise was not made by this engine
            return name.isEmpty() || !encode(name).equals(part) ? Optional.empty() : Optional.of(name);
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /**
     * @param fileName a file name found in the directory
     * @param prefix {@link #namespacePrefix} of a namespace
     * @return whether it looks like a lock file of that namespace with a hashed name part
     */
    static boolean isHashed(String fileName, String prefix) {
        String part = namePart(fileName, prefix);
        return part != null && part.indexOf(HASH_MARK) >= 0;
    }

    private static String namePart(String fileName, String prefix) {
        if (!fileName.startsWith(prefix)
                || !fileName.endsWith(SUFFIX)
                || fileName.length() <= prefix.length() + SUFFIX.length()) {
            return null;
        }
        String part = fileName.substring(prefix.length(), fileName.length() - SUFFIX.length());
        return part.indexOf('.') >= 0 ? null : part;
    }

    static String part(String text) {
        String encoded = encode(text);
        if (encoded.length() <= MAX_PART) {
            return encoded;
        }
        int cut = HASHED_PREFIX;
        if (encoded.charAt(cut - 1) == '%') {
            cut -= 1;
        } else if (encoded.charAt(cut - 2) == '%') {
            cut -= 2;
        }
        return encoded.substring(0, cut) + HASH_MARK + sha256Hex(text);
    }

    static String encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length * 3);
        for (byte b : bytes) {
            if (b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
                out.append((char) b);
            } else {
                out.append('%').append(UPPER_HEX.toHexDigits(b));
            }
        }
        return out.toString();
    }

    private static String sha256Hex(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
