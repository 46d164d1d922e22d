package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The async workload on the in-memory engine (every waiter is granted, at least once each), and its
 * negative controls: a peer whose tokens go backwards, and one whose grants fail, fail the cell.
 */
class AsyncWaitersTest {
    private static final Duration CELL = Duration.ofMillis(300);

    @Test
    void everyWaiterOfAThousandIsGrantedAndReleased() throws Exception {
        try (Peer peer = Peers.cerberus("mem:")) {
            Bench.Samples samples = AsyncWaiters.sample(peer, 1000, CELL, "mem-1");
            assertThat(samples.cycles()).as("hand-offs").isGreaterThanOrEqualTo(1000);
            assertThat(samples.sorted()).as("a latency per grant").hasSize((int) samples.cycles());
        }
    }

    @Test
    void tokensThatGoBackwardsFailTheCell() {
        AtomicLong next = new AtomicLong(1_000_000);
        Peer backwards = grantingAtOnce(() -> CompletableFuture.completedFuture(held(next.decrementAndGet())));
        assertThatThrownBy(() -> AsyncWaiters.sample(backwards, 8, CELL, "backwards"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("broke mutual exclusion")
                .hasMessageContaining("fencing token(s) not above");
    }

    @Test
    void aGrantThatFailsFailsTheCell() {
        Peer failing = grantingAtOnce(() -> CompletableFuture.failedFuture(new IllegalStateException("server gone")));
        assertThatThrownBy(() -> AsyncWaiters.sample(failing, 8, CELL, "failing"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("failed in async with 8 waiters")
                .hasMessageContaining("server gone");
    }

    private static Peer.AsyncHeld held(long token) {
        return new Peer.AsyncHeld() {
            @Override
            public long fencingToken() {
                return token;
            }

            @Override
            public CompletableFuture<?> unlockAsync() {
                return CompletableFuture.completedFuture(null);
            }
        };
    }

    /** @return a peer that holds nothing: every ask is answered by {@code grant} */
    private static Peer grantingAtOnce(java.util.function.Supplier<CompletableFuture<Peer.AsyncHeld>> grant) {
        return new Peer() {
            @Override
            public String name() {
                return "test peer";
            }

            @Override
            public Held lock(String name) {
                throw new UnsupportedOperationException("async only");
            }

            @Override
            public CompletableFuture<AsyncHeld> lockAsync(String name, long waiter) {
                return grant.get();
            }

            @Override
            public void close() {}
        };
    }
}
