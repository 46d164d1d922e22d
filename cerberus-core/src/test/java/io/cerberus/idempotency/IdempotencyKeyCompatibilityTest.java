package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Stored records are found by their key id, so the id of content that was already deterministic must
 * never change. The expected ids were computed before the canonical form learnt sets, optionals,
 * Jackson nodes, bounded numbers and surrogate escapes; a change here strands existing records.
 */
class IdempotencyKeyCompatibilityTest {
    enum Kind {
        CARD,
        WIRE
    }

    record Order(String customer, BigDecimal amount, List<String> items) {}

    public static class Customer {
        public String getName() {
            return "ann";
        }

        public boolean isActive() {
            return true;
        }

        public int getVisits() {
            return 7;
        }

        public List<String> getTags() {
            return List.of("gold", "eu");
        }
    }

    private static Map<String, Object> payload() {
        Map<String, Object> payload = new HashMap<>();
        payload.put("order", 42);
        payload.put("amount", new BigDecimal("10.50"));
        payload.put("price", 10.5);
        payload.put("items", List.of("a", "b"));
        payload.put("paid", true);
        payload.put("note", null);
        payload.put("kind", Kind.WIRE);
        payload.put("signature", new byte[] {1, 2, (byte) 0xff});
        payload.put("initial", 'c');
        payload.put("text", "quote \" backslash \\ \u00e9 \uD83D\uDE00 \n\ttab");
        payload.put("nested", Map.of("z", 1, "a", List.of(Map.of("k", "v"))));
        return payload;
    }

    @Test
    void stringsAndLongsKeepTheirIds() {
        assertThat(IdempotencyKey.ofContent("charge", "hello").id())
                .isEqualTo("v1:be26d379e618b1a2a2d17594130d45dcaaae15f0d3e072044a82ab0f1d2fd877");
        assertThat(IdempotencyKey.ofContent("charge", 42L).id())
                .isEqualTo("v1:365d9050d4f44f01f699b86cfd80eb1e268bdea788bc92a4deb577e49ae2c325");
    }

    @Test
    void mapsWithStringKeysKeepTheirIdsAndText() {
        assertThat(IdempotencyKey.canonical(payload()))
                .isEqualTo(
                        "{\"amount\":#10.5,\"initial\":\"c\",\"items\":[\"a\",\"b\"],"
                                + "\"kind\":\"WIRE\",\"nested\":{\"a\":[{\"k\":\"v\"}],\"z\":#1},\"note\":null,\"order\":#42,\"paid\":true,"
                                + "\"price\":#10.5,\"signature\":b'0102ff',\"text\":\"quote \\\" backslash \\\\ \u00e9 \uD83D\uDE00 \n\ttab\"}");
        assertThat(IdempotencyKey.ofContent("charge", payload()).id())
                .isEqualTo("v1:8aef37eea9f1f0c5c831b85453b3e13ac13bc3bbc389d5977b6132fdb3c0b8fa");
    }

    @Test
    void recordsAndBeansKeepTheirIds() {
        assertThat(IdempotencyKey.ofContent("charge", new Order("ann", new BigDecimal("10.50"), List.of("a")))
                        .id())
                .isEqualTo("v1:f6bde91785a2adfe0c2cd11d4f3ca1507cfb3be7de55db797458bdd7a5c242fa");
        assertThat(IdempotencyKey.ofContent("charge", new Customer()).id())
                .isEqualTo("v1:cc4b1505a413c4be35c998d427ba47d72b4fe1e560dde13e55b250f5770a3691");
    }

    @Test
    void numbersAndArraysKeepTheirIds() {
        List<Object> numbers = List.of(
                1,
                2.5,
                -3,
                0.001,
                1e20,
                new BigInteger("123456789012345678901234567890"),
                1e300,
                Double.MIN_VALUE,
                -0.0,
                new BigDecimal("-1.2300E+5"));
        assertThat(IdempotencyKey.ofContent("charge", numbers).id())
                .isEqualTo("v1:56b78d923c9aac17e9ac1dc12119ab0aa40e582bde86c6f61d7987e65cafe256");
        Object[] arrays = {new int[] {3, 1, 2}, new String[] {"x", "y"}, new long[0]};
        assertThat(IdempotencyKey.ofContent("charge", arrays).id())
                .isEqualTo("v1:6ae9d2d8ee175ad9d4c561d5d7f7eb6eb575565ee6aec5d4b8fdf2aa3587b502");
    }

    @Test
    void clientKeysAndFingerprintsKeepTheirIds() {
        IdempotencyKey key = IdempotencyKey.of("charge", "client-key-1", payload());
        assertThat(key.id()).isEqualTo("v1:2db0952f02308c7b9b0f29194fc648c9ccf829ea578f1be341879f21e68eaf57");
        assertThat(key.fingerprint()).isEqualTo("v1:73c9245a504d0be0b23ee5adb8c7d559758a08df056af7fc4be5beb9aa9eb780");
    }
}
