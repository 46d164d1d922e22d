package io.cerberus.jackson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.idempotency.ResultCodec;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;

/** JacksonCodec, on Jackson 3, and what ResultCodec.json(..) finds when Jackson 3 is on the class path. */
class JacksonCodecTest {
    record Receipt(String id, BigDecimal amount, List<String> items) {}

    record ReceiptV2(String id, BigDecimal amount) {}

    @Test
    void aGuardedCallReplaysARecordResultThroughJson() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:jackson-" + UUID.randomUUID())) {
            IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());
            IdempotencyKey key = IdempotencyKey.ofContent("charge", Map.of("order", 7));
            AtomicInteger runs = new AtomicInteger();
            ResultCodec<Receipt> codec = ResultCodec.json(Receipt.class);
            assertThat(codec)
                    .as("Jackson 3 is preferred when both are on the class path")
                    .isInstanceOf(JacksonCodec.class);
            Outcome<Receipt> first = guard.execute(key, Duration.ofHours(1), codec, () -> {
                runs.incrementAndGet();
                return new Receipt("r-1", new BigDecimal("10.50"), List.of("book"));
            });
            Outcome<Receipt> second = guard.execute(key, Duration.ofHours(1), codec, () -> {
                runs.incrementAndGet();
                return new Receipt("r-2", BigDecimal.ONE, List.of());
            });
            assertThat(runs).hasValue(1);
            assertThat(second.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(second.value())
                    .isEqualTo(first.value())
                    .isEqualTo(new Receipt("r-1", new BigDecimal("10.50"), List.of("book")));
        }
    }

    @Test
    void genericTypesNullsAndRemovedFieldsRoundTrip() {
        JacksonCodec<List<Receipt>> list = JacksonCodec.of(new TypeReference<>() {});
        List<Receipt> receipts = List.of(new Receipt("a", BigDecimal.TEN, List.of("x")));
        assertThat(list.decode(list.encode(receipts))).isEqualTo(receipts);
        assertThat(list.decode(list.encode(null))).isNull();
        byte[] stored = JacksonCodec.of(Receipt.class).encode(new Receipt("old", BigDecimal.ONE, List.of("y")));
        assertThat(new String(stored, StandardCharsets.UTF_8)).startsWith("{").contains("\"id\":\"old\"");
        assertThat(JacksonCodec.of(ReceiptV2.class).decode(stored))
                .as("a field the class no longer has is ignored")
                .isEqualTo(new ReceiptV2("old", BigDecimal.ONE));
        assertThat(ResultCodec.jsonOf(new TypeReference<Map<String, Integer>>() {}.getType())
                        .decode("{\"a\":1}".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(Map.of("a", 1));
    }

    @Test
    void aResultThatCannotBeReadAsTheTypeSaysWhy() {
        assertThatThrownBy(() -> JacksonCodec.of(Receipt.class).decode("[1,2]".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be read as");
        assertThatThrownBy(() -> JacksonCodec.of((Class<Object>) null)).isInstanceOf(IllegalArgumentException.class);
    }
}
