package io.cerberus.zookeeper;

import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Where a lock lives: {@code ROOT/NS/NAME/}, with one ephemeral sequential node per attempt,
 * {@code w-TOKEN-SEQ} (exclusive, fair and write) or {@code r-TOKEN-SEQ} (read). Namespace and
 * name are percent-encoded (UTF-8 bytes outside {@code A-Z a-z 0-9 - _} as {@code %XX}), so a
 * name is never a path, never {@code .} or {@code ..}, never a ZooKeeper-reserved word.
 */
final class LockPaths {
    private LockPaths() {}

    static String namespace(String root, String namespace) {
        return root + "/" + encode(namespace);
    }

    static String lock(String root, LockKey key) {
        return namespace(root, key.namespace()) + "/" + encode(key.name());
    }

    static String nodePrefix(LockMode mode, String token) {
        return (mode.isShared() ? "r-" : "w-") + token + "-";
    }

    static boolean isReader(String child) {
        return child.startsWith("r-");
    }

    static String token(String child) {
        int end = child.lastIndexOf('-');
        return end > 2 ? child.substring(2, end) : "";
    }

    /** @return the sequence number ZooKeeper appended, for ordering */
    static long sequence(String child) {
        int dash = child.lastIndexOf('-');
        try {
            return Long.parseLong(child.substring(dash + 1));
        } catch (RuntimeException e) {
            return Long.MAX_VALUE;
        }
    }

    static String encode(String text) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
                out.append((char) c);
            } else {
                out.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    static String decode(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '%' && i + 2 < text.length()) {
                out.write(Integer.parseInt(text.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
