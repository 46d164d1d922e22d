package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What {@link KeyValueEngine} adds to a store's five operations; the whole contract is the conformance suite's (kv-map: in the testkit). */
class KeyValueEngineTest {
    private static final LockKey KEY = new LockKey("app", "orders");

    /** Entries without expiry, enough for what is tested here. */
    private static class Store implements KeyValueStore {
        final Map<String, String> entries = new HashMap<>();
        int puts;

        @Override
        public String describe() {
            return "kv-test:";
        }

        @Override
        public boolean shared() {
            return true;
        }

        @Override
        public Duration expiryFor(Duration lease) {
            return lease.plusSeconds(1);
        }

        @Override
        public synchronized boolean putIfAbsent(String key, String value, Duration expiry) {
            puts++;
            return entries.putIfAbsent(key, value) == null;
        }

        @Override
        public synchronized boolean replaceIfEquals(String key, String expected, String value, Duration expiry) {
            return entries.replace(key, expected, value);
        }

        @Override
        public synchronized boolean deleteIfEquals(String key, String expected) {
            return entries.remove(key, expected);
        }

        @Override
        public synchronized Optional<String> get(String key) {
            return Optional.ofNullable(entries.get(key));
        }

        @Override
        public Optional<String> whyNot(Capability capability) {
            return Optional.of("the test store forgets its counters");
        }

        @Override
        public void close() {}
    }

    private static final class CountingStore extends Store implements FencingCounter {
        private final Map<String, Long> counters = new HashMap<>();

        @Override
        public synchronized long increment(String key) {
            return counters.merge(key, 1L, Long::sum);
        }
    }

    private static Acquisition attempt(String token, LockMode mode) {
        return new Acquisition(KEY, mode, token, "test", Duration.ofSeconds(5));
    }

    private static long fence(AcquireResult result) {
        assertThat(result).isInstanceOf(AcquireResult.Granted.class);
        return ((AcquireResult.Granted) result).fencingToken();
    }

    @Test
    void releasedNamesLeaveNothingInTheStoreButTheNamespacesCounter() {
        CountingStore store = new CountingStore();
        KeyValueEngine engine = new KeyValueEngine(store);
        long last = 0;
        for (int i = 0; i < 200; i++) {
            Acquisition attempt = new Acquisition(
                    new LockKey("ns", "order:" + (i % 50)), LockMode.EXCLUSIVE, "t" + i, "test", Duration.ofSeconds(5));
            long fence = fence(engine.tryAcquire(attempt));
            assertThat(fence).isGreaterThan(last);
            last = fence;
            assertThat(engine.release(attempt)).isTrue();
        }
        assertThat(store.entries).isEmpty();
        assertThat(store.counters).containsOnlyKeys(KeyValueEngine.counterKey("ns"));
    }

    @Test
    void aRetriedAcquireOfTheHolderIsGrantedAgainWithTheSameFenceAndLaterHoldersGetLargerOnes() {
        KeyValueEngine engine = new KeyValueEngine(new CountingStore());
        assertThat(engine.capabilities()).containsExactlyInAnyOrder(Capability.FENCING, Capability.MULTI_PROCESS);
        Acquisition first = attempt("t1", LockMode.EXCLUSIVE);
        long fence = fence(engine.tryAcquire(first));
        assertThat(fence(engine.tryAcquire(first)))
                .as("a retry after a lost answer")
                .isEqualTo(fence);
        Acquisition second = attempt("t2", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(second)).isInstanceOf(AcquireResult.Busy.class);
        assertThat(engine.release(first)).isTrue();
        assertThat(fence(engine.tryAcquire(second))).isGreaterThan(fence);
    }

    @Test
    void renewAndReleaseAreOwnerChecked() {
        Store store = new Store();
        KeyValueEngine engine = new KeyValueEngine(store);
        Acquisition holder = attempt("t1", LockMode.EXCLUSIVE);
        Acquisition other = attempt("t2", LockMode.EXCLUSIVE);
        assertThat(fence(engine.tryAcquire(holder))).as("no counter, no fence").isEqualTo(-1);
        assertThat(engine.renew(other)).isFalse();
        assertThat(engine.release(other)).isFalse();
        assertThat(engine.isLocked(KEY)).isTrue();
        assertThat(engine.renew(holder)).isTrue();
        engine.abandon(other);
        assertThat(engine.isLocked(KEY))
                .as("abandoning another attempt frees nothing")
                .isTrue();
        assertThat(engine.release(holder)).isTrue();
        assertThat(engine.isLocked(KEY)).isFalse();
        assertThat(engine.release(holder)).as("released once").isFalse();
    }

    @Test
    void aStoreWithoutACounterHasNoFencingAndSaysWhy() {
        KeyValueEngine engine = new KeyValueEngine(new Store());
        assertThat(engine.capabilities()).containsExactly(Capability.MULTI_PROCESS);
        assertThat(engine.whyNot(Capability.FENCING)).contains("the test store forgets its counters");
        assertThat(engine.silentHolderExpiry(Duration.ofSeconds(2)))
                .as("what the store really sets")
                .contains(Duration.ofSeconds(3));
        assertThatThrownBy(() -> engine.tryAcquire(attempt("t", LockMode.READ)))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("exclusive locks only");
    }

    @Test
    void busyAnswersNameTheHolderTheCoreBacksOffAndNoTwoLocksShareAnEntry() {
        Store store = new Store();
        KeyValueEngine engine = new KeyValueEngine(store);
        Acquisition holder = attempt("holder", LockMode.EXCLUSIVE);
        engine.tryAcquire(holder);
        AcquireResult.Busy busy = (AcquireResult.Busy) engine.tryAcquire(attempt("waiter", LockMode.EXCLUSIVE));
        assertThat(busy.holder())
                .as("a waiter behind a hold of its own client waits in line for it")
                .isEqualTo(holder.token());
        assertThat(busy.retryWithin())
                .as("a release elsewhere is seen within the longest pause")
                .isEqualTo(KeyValueEngine.MAX_PAUSE);
        assertThat(engine.firstBackoff())
                .as("the core's line backs the head off")
                .isEqualTo(KeyValueEngine.FIRST_PAUSE);
        assertThat(engine.maxBackoff()).isEqualTo(KeyValueEngine.MAX_PAUSE);
        assertThat(KeyValueEngine.entryKey(new LockKey("a:b", "c")))
                .isNotEqualTo(KeyValueEngine.entryKey(new LockKey("a", "b:c")));
        assertThat(KeyValueEngine.counterKey("a"))
                .isNotEqualTo(KeyValueEngine.entryKey(new LockKey("a", "x")))
                .isNotEqualTo(KeyValueEngine.entryKey(new LockKey("a", "")))
                .isNotEqualTo(KeyValueEngine.epochKey("a"));
    }

    @Test
    void aForcedReleaseFreesOnlyTheHoldWithThatTokenAndItsHolderLearnsAtItsNextRenewal() {
        CountingStore store = new CountingStore();
        KeyValueEngine engine = new KeyValueEngine(store);
        Acquisition stuck = attempt("stuck", LockMode.EXCLUSIVE);
        long token = fence(engine.tryAcquire(stuck));
        assertThat(store.entries).containsValue("stuck#" + token);
        AcquireResult.Busy busy = (AcquireResult.Busy) engine.tryAcquire(attempt("waiter", LockMode.EXCLUSIVE));
        assertThat(busy.holder()).as("the holder, without its fence").isEqualTo("stuck");
        assertThat(engine.renew(stuck)).isTrue();

        assertThat(engine.forceRelease(KEY, token + 10))
                .as("no hold has that token")
                .isFalse();
        assertThat(engine.forceRelease(KEY, token)).isTrue();
        assertThat(engine.renew(stuck))
                .as("the old holder learns at its next renewal")
                .isFalse();

        Acquisition next = attempt("next", LockMode.EXCLUSIVE);
        assertThat(fence(engine.tryAcquire(next))).isGreaterThan(token);
        assertThat(engine.forceRelease(KEY, token))
                .as("the old token again: the newer hold is not freed")
                .isFalse();
        assertThat(engine.isLocked(KEY)).isTrue();
        assertThat(engine.release(stuck))
                .as("the freed hold's release finds nothing")
                .isFalse();
        assertThat(engine.release(next)).isTrue();
        assertThatThrownBy(() -> new KeyValueEngine(new Store()).forceRelease(KEY, 1))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("no fencing tokens");
    }

    @Test
    void aGrantWhoseFenceWasNotWrittenIsStillReleasedByItsHolder() {
        CountingStore store = new CountingStore();
        KeyValueEngine engine = new KeyValueEngine(store);
        Acquisition holder = attempt("holder", LockMode.EXCLUSIVE);
        long token = fence(engine.tryAcquire(holder));
        store.entries.put(KeyValueEngine.entryKey(KEY), "holder"); // as if the fence's write was lost
        assertThat(engine.forceRelease(KEY, token))
                .as("a hold is named by the token written in its entry only")
                .isFalse();
        assertThat(engine.release(holder)).isTrue();
        assertThat(engine.isLocked(KEY)).isFalse();
    }
}
