package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client's own calls at their edges: on a closed client, on an engine without the capability they need. */
class ClientCallsTest {
    private final String a = "a-" + UUID.randomUUID();
    private final String b = "b-" + UUID.randomUUID();

    @AfterEach
    void giveBack() {
        SwitchableEngineProvider.without(a);
        SwitchableEngineProvider.unsafe(b, false);
    }

    private Cerberus twoEngines() {
        return Cerberus.builder()
                .engine("primary", "switchable:" + a)
                .engine("secondary", "switchable:" + b)
                .build();
    }

    @Test
    void everyCallThatNeedsTheEnginesIsRefusedOnAClosedClient() {
        SwitchableEngineProvider.without(a, Capability.INSPECT); // a forced release then reads no holder first
        Cerberus cerberus = twoEngines();
        DistributedLock lock = cerberus.lock("before-close");
        DistributedSemaphore semaphore = cerberus.semaphore("pool", 2);
        MultiLock both = cerberus.multiLock("account:1", "account:2");
        cerberus.close();
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("lock", () -> cerberus.lock("x"));
        calls.put("isLocked", lock::isLocked);
        // the async calls throw too, as the blocking ones do, rather than return a future that fails
        calls.put("acquireAsync", () -> lock.acquireAsync(Duration.ZERO));
        calls.put("semaphore acquire", () -> semaphore.acquire(1, Duration.ZERO));
        calls.put("semaphore acquireAsync", () -> semaphore.acquireAsync(1, Duration.ZERO));
        calls.put("semaphore release", () -> semaphore.release("0:1"));
        calls.put("multi-lock acquire", () -> both.acquire(Duration.ZERO));
        calls.put("multi-lock acquireAsync", () -> both.acquireAsync(Duration.ZERO));
        calls.put("switchEngine()", cerberus::switchEngine);
        calls.put("switchEngine(name)", () -> cerberus.switchEngine("secondary"));
        calls.put("checkEngine", () -> cerberus.checkEngine("primary"));
        calls.put("inspect", () -> cerberus.inspect(""));
        calls.put("inspectEngine", () -> cerberus.inspectEngine("secondary", ""));
        calls.put("forceRelease", () -> cerberus.forceRelease("x", 1));
        calls.put("idempotency", () -> cerberus.idempotency(IdempotencyOptions.defaults()));
        calls.forEach((name, call) -> assertThatThrownBy(call)
                .as(name)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("this Cerberus client is closed"));
        assertThat(cerberus.currentEngine())
                .as("what the client is made of can still be read")
                .isEqualTo("primary");
    }

    @Test
    void closingTheClientClosesItsEnginesAndEndsItsAsyncThreadsAtOnce() throws Exception {
        Set<Thread> before = asyncThreads();
        Cerberus holder = twoEngines();
        Cerberus cerberus = twoEngines();
        Lease held = holder.lock("busy").acquire(Duration.ZERO);
        try {
            CompletableFuture<Lease> waiting = cerberus.lock("busy").acquireAsync(Duration.ofMinutes(1));
            Set<Thread> mine = asyncThreads();
            mine.removeAll(before);
            assertThat(mine).as("the async call's threads").isNotEmpty();
            cerberus.close();
            assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            Await.until(
                    "the async threads ended with the client, not after their idle time",
                    Duration.ofSeconds(2),
                    () -> mine.stream().noneMatch(Thread::isAlive));
            assertThat(SwitchableEngineProvider.closed(a))
                    .as("engines closed: one of each client")
                    .isEqualTo(1);
            assertThat(SwitchableEngineProvider.closed(b)).isEqualTo(1);
        } finally {
            held.close();
            holder.close();
        }
    }

    @Test
    void closingTheClientEndsTheThreadThatToldItsLosses() throws Exception {
        String uri = "scripted:" + a;
        Cerberus cerberus = Cerberus.builder()
                .engine(uri)
                .defaultLease(Duration.ofMillis(300))
                .build();
        try {
            Lease lease = cerberus.lock("lost").acquire(Duration.ZERO);
            CompletableFuture<Thread> toldOn = new CompletableFuture<>();
            lease.onLost((lost, reason) -> toldOn.complete(Thread.currentThread()));
            ScriptedEngineProvider.opened(uri).renewals = ScriptedEngineProvider.RenewalMode.REFUSE;
            Thread events = toldOn.get(10, TimeUnit.SECONDS);
            assertThat(events.getName()).startsWith("cerberus-lease-events-");
            cerberus.close();
            Await.until(
                    "the lease-events thread ended with its client", Duration.ofSeconds(2), () -> !events.isAlive());
        } finally {
            cerberus.close();
        }
    }

    @Test
    void aGuardOnAFirstEngineThatKeepsNoRecordsIsRefusedNamingTheEnginesThatDo() {
        try (Cerberus alone = Cerberus.connect("scripted:" + a)) {
            assertThatThrownBy(() -> alone.idempotency(IdempotencyOptions.defaults()))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("scripted:" + a)
                    .hasMessageContaining("keeps no idempotency records")
                    .hasMessageContaining("mem:, file:")
                    .hasMessageNotContaining("Put one of those first");
        }
        try (Cerberus two = Cerberus.builder()
                .engine("primary", "scripted:" + a)
                .engine("secondary", "mem:" + b)
                .build()) {
            assertThatThrownBy(() -> two.idempotency(IdempotencyOptions.defaults()))
                    .as("records stay on the first engine, though the second keeps them")
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("Put one of those first, or use a client of its own for the guard");
        }
    }

    @Test
    void aClientSaysWhatItIs() {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("primary", "switchable:" + a)
                .namespace("billing")
                .build()) {
            assertThat(cerberus.toString())
                    .contains("namespace=billing")
                    .contains("primary")
                    .contains("switchable:" + a);
        }
    }

    private static Set<Thread> asyncThreads() {
        Set<Thread> threads = new HashSet<>(Thread.getAllStackTraces().keySet());
        threads.removeIf(thread -> !thread.getName().startsWith("cerberus-async-"));
        return threads;
    }

    @Test
    void aClientThatCannotStartClosesTheEnginesItOpenedAlready() {
        SwitchableEngineProvider.unsafe(b, true);
        assertThatThrownBy(this::twoEngines).isInstanceOf(UnsafeEngineException.class);
        assertThat(SwitchableEngineProvider.closed(a))
                .as("the primary, opened before the standby failed")
                .isEqualTo(1);
    }

    @Test
    void inspectAndForceReleaseNeedTheirCapabilitiesAndSayWhichIsMissing() {
        SwitchableEngineProvider.without(a, Capability.INSPECT, Capability.FENCING);
        try (Cerberus cerberus = twoEngines()) {
            assertThatThrownBy(() -> cerberus.inspect("order"))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageStartingWith("engine 'primary' (switchable:" + a + ") has no listing held locks");
            assertThatThrownBy(() -> cerberus.forceRelease("order", 7))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageStartingWith("engine 'primary' (switchable:" + a + ") has no fencing tokens");
            assertThat(cerberus.inspectEngine("secondary", "order")).isEmpty();
        }
    }

    @Test
    void checkEngineReturnsWhatTheEngineWarnsOf() throws Exception {
        try (Cerberus cerberus = twoEngines()) {
            assertThat(cerberus.checkEngine("secondary")).containsExactly("switchable:" + b + " is a test engine");
            try (Lease held = cerberus.lock("order").acquire(Duration.ZERO)) {
                assertThat(cerberus.inspect("order"))
                        .singleElement()
                        .satisfies(info -> assertThat(info.fencingToken()).isEqualTo(held.fencingToken()));
            }
        }
    }
}
