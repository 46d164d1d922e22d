package io.cerberus.internal;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Owner tokens: 128 random bits from {@link SecureRandom}, as 32 hex characters. */
public final class Tokens {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Tokens() {}

    /** @return a new owner token */
    public static String next() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
