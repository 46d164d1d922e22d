package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.idempotency.IdempotencyKey;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Content of the caller's own types, declared private in a package other than the guard's (as a user's code has
 * them): their getters and record components are read all the same.
 */
class IdempotencyKeysOfPrivateTypesTest {

    private record Order(String customer, long amount) {}

    private static final class Refund {
        public String getOrder() {
            return "o-1";
        }
    }

    @Test
    void privateRecordsAndBeansOfTheCallerAreReadLikePublicOnes() {
        assertThat(IdempotencyKey.ofContent("charge", new Order("ann", 10)).id())
                .isEqualTo(IdempotencyKey.ofContent("charge", Map.of("customer", "ann", "amount", 10))
                        .id());
        assertThat(IdempotencyKey.ofContent("refund", new Refund()).id())
                .isEqualTo(IdempotencyKey.ofContent("refund", Map.of("order", "o-1"))
                        .id());
    }
}
