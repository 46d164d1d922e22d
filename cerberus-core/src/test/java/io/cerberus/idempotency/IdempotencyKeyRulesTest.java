package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The rules a key's names follow, at their limits, what a key says of itself, and the limits of the guard's
 * options: each limit accepted, one past it refused with the rule named.
 */
class IdempotencyKeyRulesTest {

    @Test
    void operationNamesHaveOneTo256CharactersWithoutNul() {
        String longest = "o".repeat(256);
        assertThat(IdempotencyKey.ofContent(longest, 1).operation()).isEqualTo(longest);
        assertThat(IdempotencyKey.of(longest, "k", 1).operation()).isEqualTo(longest);
        assertThat(IdempotencyKey.ofContent("charge", 1).operation()).isEqualTo("charge");
        assertThatThrownBy(() -> IdempotencyKey.ofContent(longest + "o", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an operation name must have 1 to 256 characters, was 257 long");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an operation name must have 1 to 256 characters, was 0 long");
        assertThatThrownBy(() -> IdempotencyKey.of(null, "k", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an operation name must have 1 to 256 characters, was null");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("\u0000charge", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an operation name must not contain NUL, had one at index 0");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("charge\u0000", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an operation name must not contain NUL, had one at index 6");
    }

    @Test
    void clientKeysHaveOneTo512Characters() {
        String longest = "k".repeat(512);
        assertThat(IdempotencyKey.of("charge", longest, 1).id()).startsWith("v1:");
        assertThatThrownBy(() -> IdempotencyKey.of("charge", longest + "k", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an idempotency key must have 1 to 512 characters, had 513");
        assertThatThrownBy(() -> IdempotencyKey.of("charge", "", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an idempotency key must have 1 to 512 characters, had 0");
    }

    @Test
    void keysAreEqualWhenTheirIdAndPayloadAreAndSayWhatTheyAre() {
        IdempotencyKey key = IdempotencyKey.of("charge", "k-1", "payload");
        IdempotencyKey same = IdempotencyKey.of("charge", "k-1", "payload");
        assertThat(key).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(key)
                .as("the same client key with another payload: one id, not the same key")
                .isNotEqualTo(IdempotencyKey.of("charge", "k-1", "other payload"));
        assertThat(IdempotencyKey.of("charge", "k-1", "other payload").id()).isEqualTo(key.id());
        assertThat(key).isNotEqualTo(IdempotencyKey.of("refund", "k-1", "payload"));
        assertThat(key).isNotEqualTo(IdempotencyKey.of("charge", "k-2", "payload"));
        assertThat(key).isNotEqualTo("charge");
        assertThat(key.toString())
                .as("the operation and the start of the id, never the client's key")
                .isEqualTo("IdempotencyKey[charge " + key.id().substring(0, 15) + "...]")
                .doesNotContain("k-1");
    }

    @Test
    void optionsAcceptTheirLimitsAndRefuseOnePast() {
        IdempotencyOptions defaults = IdempotencyOptions.defaults();
        assertThat(defaults.withLease(Duration.ofMillis(100)).lease()).isEqualTo(Duration.ofMillis(100));
        assertThatThrownBy(() -> defaults.withLease(Duration.ofMillis(99)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the idempotency lease must be at least 100ms, was 99ms");
        assertThat(defaults.withStoreAttempts(1).storeAttempts()).isEqualTo(1);
        assertThat(defaults.withStoreAttempts(10).storeAttempts()).isEqualTo(10);
        assertThatThrownBy(() -> defaults.withStoreAttempts(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("storeAttempts must be 1 to 10, was 0");
        assertThatThrownBy(() -> defaults.withStoreAttempts(11))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("storeAttempts must be 1 to 10, was 11");
        assertThat(defaults.waitingWhenInProgress(Duration.ZERO).waitAtMost()).isZero();
        assertThatThrownBy(() -> defaults.waitingWhenInProgress(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("waitAtMost must not be negative");
    }
}
