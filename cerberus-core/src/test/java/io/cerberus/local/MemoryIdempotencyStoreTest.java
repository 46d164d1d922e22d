package io.cerberus.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class MemoryIdempotencyStoreTest {

    @Test
    void recordsThatAreOverAreSweptSoTheMapDoesNotGrowForEver() throws Exception {
        MemoryIdempotencyStore store = new MemoryIdempotencyStore(Duration.ofMillis(20));
        for (int i = 0; i < 1000; i++) {
            assertThat(store.claim("ns/k" + i, "f", "t" + i, Duration.ofMillis(500))).isEmpty(); // outlives the loop
        }
        assertThat(store.size()).isEqualTo(1000);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        // claims (the same one, resent) sweep once the records are over and the interval has passed
        while (store.size() > 1 && System.nanoTime() - deadline < 0) {
            assertThat(store.claim("ns/new", "f", "t", Duration.ofSeconds(30))).isEmpty();
            Thread.sleep(5);
        }
        assertThat(store.size()).as("the 1000 records that were over are gone").isEqualTo(1);
        assertThat(store.read("ns/new")).isPresent();
    }
}
