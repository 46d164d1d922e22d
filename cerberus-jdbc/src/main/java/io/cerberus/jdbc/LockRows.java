package io.cerberus.jdbc;

import io.cerberus.spi.LockKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A lock's key in the database: SHA-256 over table, namespace and name (separated by NUL, which
 * none of them may contain), so any name of up to 512 characters fits a short primary key, and
 * names are never interpreted. The same digest gives the session-lock names, and a namespace's epoch
 * row its key ({@link #epochKey}), which no lock's key can equal.
 */
final class LockRows {
    private LockRows() {}

    /** Cloned for each digest: a clone is much cheaper than a look-up of the provider. */
    private static final MessageDigest SHA_256 = sha256();

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    static byte[] digest(String table, LockKey key) {
        MessageDigest sha;
        try {
            sha = (MessageDigest) SHA_256.clone();
        } catch (CloneNotSupportedException e) {
            sha = sha256();
        }
        sha.update(table.getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        sha.update(key.namespace().getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        return sha.digest(key.name().getBytes(StandardCharsets.UTF_8));
    }

    /** @return the row key: 64 hex characters */
    static String key(String table, LockKey key) {
        return HexFormat.of().formatHex(digest(table, key));
    }

    /**
     * @return the key of a namespace's epoch row: {@code epoch:} and 58 hex characters of the digest of table,
     *     namespace and an empty name (which no lock has); with its colon it is no lock's key
     */
    static String epochKey(String table, String namespace) {
        return "epoch:" + HexFormat.of().formatHex(digest(table, new LockKey(namespace, "")), 0, 29);
    }

    /** @return a PostgreSQL advisory-lock key: the digest's first 64 bits */
    static long advisoryKey(String table, LockKey key) {
        byte[] digest = digest(table, key);
        long value = 0;
        for (int i = 0; i < 8; i++) {
            value = (value << 8) | (digest[i] & 0xff);
        }
        return value;
    }

    /**
     * @return a MariaDB/MySQL {@code GET_LOCK} name within its 64-character limit: a prefix and
     *     160 bits of the digest
     */
    static String sessionLockName(String table, LockKey key) {
        return "cerberus:" + HexFormat.of().formatHex(digest(table, key), 0, 20);
    }

    /** @return the holder description cut to the column's 256 characters */
    static String holder(String holder) {
        return holder.length() <= 256 ? holder : holder.substring(0, 256);
    }
}
