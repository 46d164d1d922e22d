package io.cerberus.jackson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Jackson2Codec, for applications on Jackson 2, and the promise that lets them move to Jackson 3:
 * what Jackson2Codec stored, JacksonCodec reads as the same value.
 */
class Jackson2CodecTest {
    record Receipt(String id, BigDecimal amount, List<String> items) {}

    record ReceiptV2(String id, BigDecimal amount) {}

    /** toString() differs from the name: Jackson 3 would write and read it by default, Jackson 2 never did. */
    enum Status {
        PAID,
        REFUNDED;

        @Override
        public String toString() {
            return name().toLowerCase(java.util.Locale.ROOT) + " (status)";
        }
    }

    record Payment(
            String id,
            long cents,
            int attempts,
            boolean captured,
            double rate,
            Status status,
            BigDecimal fee,
            List<Receipt> receipts,
            Map<String, Integer> counts,
            char grade,
            byte[] signature,
            String note) {}

    record PaymentV2(
            String id,
            long cents,
            int attempts,
            boolean captured,
            double rate,
            Status status,
            BigDecimal fee,
            List<Receipt> receipts,
            Map<String, Integer> counts,
            char grade,
            byte[] signature,
            String note,
            long refundedCents) {}

    @Test
    void genericTypesNullsAndRemovedFieldsRoundTrip() {
        Jackson2Codec<List<Receipt>> list = Jackson2Codec.of(new TypeReference<>() {});
        List<Receipt> receipts = List.of(new Receipt("a", BigDecimal.TEN, List.of("x")));
        assertThat(list.decode(list.encode(receipts))).isEqualTo(receipts);
        assertThat(list.decode(list.encode(null))).isNull();
        byte[] stored = Jackson2Codec.of(Receipt.class).encode(new Receipt("old", BigDecimal.ONE, List.of("y")));
        assertThat(new String(stored, StandardCharsets.UTF_8)).startsWith("{").contains("\"id\":\"old\"");
        assertThat(Jackson2Codec.of(ReceiptV2.class).decode(stored))
                .as("a field the class no longer has is ignored")
                .isEqualTo(new ReceiptV2("old", BigDecimal.ONE));
        assertThat(Jackson2Codec.of(JsonMapper.builder().build(), Receipt.class).decode(stored))
                .isEqualTo(new Receipt("old", BigDecimal.ONE, List.of("y")));
    }

    @Test
    void aResultThatCannotBeReadAsTheTypeSaysWhy() {
        assertThatThrownBy(() -> Jackson2Codec.of(Receipt.class).decode("[1,2]".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be read as");
        assertThatThrownBy(() -> Jackson2Codec.of((Class<Object>) null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void whatJackson2StoredJackson3ReadsAsTheSameValue() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        counts.put("b", 2);
        counts.put("a", 1);
        Payment payment = new Payment(
                "p-1",
                1050L,
                2,
                true,
                0.25,
                Status.REFUNDED,
                new BigDecimal("0.10"),
                List.of(new Receipt("r-1", new BigDecimal("10.50"), List.of("book", "pen"))),
                counts,
                'A',
                new byte[] {1, 2, 3},
                null);
        byte[] stored = Jackson2Codec.of(Payment.class).encode(payment);

        Payment read = JacksonCodec.of(Payment.class).decode(stored);
        assertThat(read).usingRecursiveComparison().isEqualTo(payment);
        assertThat(read.fee()).as("the scale of a decimal is kept").isEqualTo(new BigDecimal("0.10"));
        assertThat(read.counts()).containsExactly(Map.entry("b", 2), Map.entry("a", 1));
        assertThat(JacksonCodec.of(new tools.jackson.core.type.TypeReference<List<Receipt>>() {})
                        .decode(Jackson2Codec.of(new TypeReference<List<Receipt>>() {})
                                .encode(payment.receipts())))
                .isEqualTo(payment.receipts());
        assertThat(JacksonCodec.of(PaymentV2.class).decode(stored).refundedCents())
                .as("a primitive the stored record does not have reads as its default, as on Jackson 2")
                .isZero();
    }

    @Test
    void whatJackson3StoresJackson2Reads() {
        Payment payment = new Payment(
                "p-2",
                7L,
                1,
                false,
                1.5,
                Status.PAID,
                BigDecimal.ONE,
                List.of(),
                Map.of("x", 3),
                'z',
                new byte[0],
                "note");
        byte[] stored = JacksonCodec.of(Payment.class).encode(payment);
        assertThat(new String(stored, StandardCharsets.UTF_8))
                .as("enums by name, as Jackson 2 writes them")
                .contains("\"PAID\"");
        assertThat(Jackson2Codec.of(Payment.class).decode(stored))
                .usingRecursiveComparison()
                .isEqualTo(payment);
    }
}
