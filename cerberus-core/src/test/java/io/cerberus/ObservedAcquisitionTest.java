package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.CerberusMetrics.HoldObserver;
import io.cerberus.CerberusMetrics.WaitObserver;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What an observer of acquisitions is told, once each, and what the client keeps of contention. */
class ObservedAcquisitionTest {
    private final String store = "mem:observed-" + UUID.randomUUID();

    /** Records each call as a line: "asked NAME on THREAD", "busy HOLDER", "ended OUTCOME", "released", "lost". */
    private static final class Recorder implements CerberusMetrics {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final String note;

        Recorder(String note) {
            this.note = note;
        }

        @Override
        public WaitObserver acquiring(String engine, String mode, String name) {
            calls.add("asked " + name + " on " + Thread.currentThread().getName());
            return new WaitObserver() {
                @Override
                public String holderNote() {
                    return note;
                }

                @Override
                public boolean wantsHolder() {
                    return true;
                }

                @Override
                public void busy(String holder) {
                    calls.add("busy " + holder);
                }

                @Override
                public HoldObserver ended(AcquireOutcome outcome) {
                    calls.add("ended " + outcome);
                    return new HoldObserver() {
                        @Override
                        public void released() {
                            calls.add("released");
                        }

                        @Override
                        public void lost(LockLostException reason) {
                            calls.add("lost");
                        }
                    };
                }
            };
        }
    }

    @Test
    void aWaiterIsToldOnceWhoHoldsTheLockWithTheHoldersNoteAndEachHoldItsEnd() throws Exception {
        Recorder holderSide = new Recorder("trace=holder");
        Recorder waiterSide = new Recorder("trace=waiter");
        try (Cerberus holder =
                        Cerberus.builder().engine(store).metrics(holderSide).build();
                Cerberus waiter =
                        Cerberus.builder().engine(store).metrics(waiterSide).build()) {
            Lease held = holder.lock("order:42").acquire(Duration.ZERO);
            assertThat(holder.inspect("order:42").get(0).holder()).endsWith(" trace=holder");

            CompletableFuture<Lease> waiting = waiter.lock("order:42").acquireAsync(Duration.ofSeconds(10));
            poll(
                    "the waiter observed busy",
                    () -> waiterSide.calls.stream().anyMatch(call -> call.startsWith("busy ")));
            held.close();
            waiting.get(10, TimeUnit.SECONDS).close();

            assertThat(holderSide.calls)
                    .containsExactly(
                            "asked order:42 on " + Thread.currentThread().getName(), "ended GRANTED", "released");
            assertThat(waiterSide.calls).hasSize(4);
            assertThat(waiterSide.calls.get(0))
                    .as("an async acquisition is observed from the thread that asked")
                    .isEqualTo("asked order:42 on " + Thread.currentThread().getName());
            assertThat(waiterSide.calls.get(1))
                    .startsWith("busy " + ProcessHandle.current().pid() + "@")
                    .endsWith(" trace=holder");
            assertThat(waiterSide.calls.subList(2, 4)).containsExactly("ended GRANTED", "released");

            assertThat(waiter.contention()).singleElement().satisfies(contention -> {
                assertThat(contention.name()).isEqualTo("order:42");
                assertThat(contention.contended()).isEqualTo(1);
                assertThat(contention.timedOut()).isZero();
                assertThat(contention.totalWait()).isPositive();
                assertThat(contention.lastHolder()).endsWith(" trace=holder");
            });
            assertThat(holder.contention()).isEmpty();
        }
    }

    @Test
    void aWriterWaitingForTwoReadersIsToldOfBoth() throws Exception {
        Recorder firstSide = new Recorder("trace=first");
        Recorder secondSide = new Recorder("trace=second");
        Recorder writerSide = new Recorder("trace=writer");
        try (Cerberus first =
                        Cerberus.builder().engine(store).metrics(firstSide).build();
                Cerberus second =
                        Cerberus.builder().engine(store).metrics(secondSide).build();
                Cerberus writer =
                        Cerberus.builder().engine(store).metrics(writerSide).build()) {
            Lease one = first.readWriteLock("report").readLock().acquire(Duration.ZERO);
            Lease two = second.readWriteLock("report").readLock().acquire(Duration.ZERO);
            CompletableFuture<Lease> waiting =
                    writer.readWriteLock("report").writeLock().acquireAsync(Duration.ofSeconds(10));
            poll(
                    "the writer observed busy",
                    () -> writerSide.calls.stream().anyMatch(call -> call.startsWith("busy ")));
            one.close();
            two.close();
            waiting.get(10, TimeUnit.SECONDS).close();
            assertThat(writerSide.calls.get(1))
                    .as("both readers, joined")
                    .contains(" trace=first")
                    .contains(" trace=second")
                    .contains(", ");
        }
    }

    @Test
    void aWaiterOnAnEngineThatCannotListItsHoldsIsToldTheLockIsBusyWithoutAHolder() throws Exception {
        String name = "no-inspect-" + UUID.randomUUID();
        SwitchableEngineProvider.without(name, Capability.INSPECT);
        Recorder waiterSide = new Recorder("trace=waiter");
        try (Cerberus holder = Cerberus.builder().engine("switchable:" + name).build();
                Cerberus waiter = Cerberus.builder()
                        .engine("switchable:" + name)
                        .metrics(waiterSide)
                        .build()) {
            Lease held = holder.lock("order:7").acquire(Duration.ZERO);
            CompletableFuture<Lease> waiting = waiter.lock("order:7").acquireAsync(Duration.ofSeconds(10));
            poll(
                    "the waiter observed busy",
                    () -> waiterSide.calls.stream().anyMatch(call -> call.startsWith("busy ")));
            held.close();
            waiting.get(10, TimeUnit.SECONDS).close();
            assertThat(waiterSide.calls.get(1))
                    .as("an engine without INSPECT is not asked who holds the lock")
                    .isEqualTo("busy ");
            assertThat(waiter.contention())
                    .singleElement()
                    .satisfies(contention -> assertThat(contention.lastHolder()).isEmpty());
        } finally {
            SwitchableEngineProvider.without(name);
        }
    }

    @Test
    void anInterruptibleAcquireOnAnInterruptedThreadThrowsBeforeItAsksAndIsObservedAsInterrupted() throws Exception {
        Recorder recorder = new Recorder("");
        try (Cerberus cerberus =
                        Cerberus.builder().engine(store).metrics(recorder).build();
                Cerberus other = Cerberus.connect(store)) {
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> cerberus.lock("order:7").tryLock(5, TimeUnit.SECONDS))
                    .isInstanceOf(InterruptedException.class)
                    .hasMessageContaining("interrupted before acquiring");
            assertThat(Thread.interrupted())
                    .as("the interrupt is taken, as Lock.tryLock takes it")
                    .isFalse();
            assertThat(other.inspect("order:7"))
                    .as("nothing was asked of the engine")
                    .isEmpty();
            assertThat(recorder.calls.subList(1, recorder.calls.size())).containsExactly("ended INTERRUPTED");
        }
    }

    @Test
    void lockOnAnInterruptedThreadStillAcquiresAndKeepsTheInterruptForTheCaller() throws Exception {
        Recorder recorder = new Recorder("");
        try (Cerberus cerberus =
                Cerberus.builder().engine(store).metrics(recorder).build()) {
            DistributedLock lock = cerberus.lock("order:8");
            Thread.currentThread().interrupt();
            try {
                lock.lock();
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
                assertThat(lock.isHeldByCurrentThread()).isTrue();
                lock.unlock();
            } finally {
                Thread.interrupted();
            }
            assertThat(recorder.calls.subList(1, recorder.calls.size())).containsExactly("ended GRANTED", "released");
        }
    }

    @Test
    void aClosedClientTellsAnInterruptedCallerItIsClosed() throws Exception {
        Cerberus cerberus = Cerberus.connect(store);
        DistributedLock lock = cerberus.lock("order:9");
        cerberus.close();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aLostHoldIsToldItsLossOnceAndNotItsRelease() throws Exception {
        Recorder recorder = new Recorder("");
        try (Cerberus cerberus = Cerberus.builder()
                .engine(store)
                .defaultLease(Duration.ofMillis(300))
                .metrics(recorder)
                .build()) {
            Lease held = cerberus.lock("report").acquire(Duration.ZERO);
            assertThat(cerberus.inspect("report").get(0).holder()).doesNotEndWith(" ");
            assertThat(cerberus.forceRelease("report", held.fencingToken())).isTrue();
            poll("the loss observed", () -> recorder.calls.contains("lost"));
            try {
                held.close();
            } catch (LockLostException expected) {
                // the loss, told to the caller too
            }
            assertThat(recorder.calls.subList(1, recorder.calls.size())).containsExactly("ended GRANTED", "lost");
        }
    }

    @Test
    @SuppressWarnings("try") // the held lock is what the other wait meets
    void aWaitThatRunsOutIsCountedAsContendedAndTimedOut() throws Exception {
        try (Cerberus cerberus = Cerberus.connect(store)) {
            try (Lease held = cerberus.lock("busy").acquire(Duration.ZERO)) {
                Optional<Lease> none = CompletableFuture.supplyAsync(() -> {
                            try {
                                return cerberus.lock("busy").tryAcquire(Duration.ofMillis(50));
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        })
                        .get(10, TimeUnit.SECONDS);
                assertThat(none).isEmpty();
            }
            assertThat(cerberus.contention()).singleElement().satisfies(contention -> {
                assertThat(contention.timedOut()).isEqualTo(1);
                assertThat(contention.longestWait()).isGreaterThanOrEqualTo(Duration.ofMillis(50));
                assertThat(contention.lastHolder())
                        .as("nobody asked who held it")
                        .isEmpty();
            });
        }
    }

    @Test
    void aLeadershipsParticipantIdStaysAsGivenWithoutTheNote() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(store)
                        .metrics(new Recorder("trace=leader"))
                        .build();
                Leadership billing = cerberus.leadership("billing", "node-1").start()) {
            assertThat(billing.awaitLeadership(Duration.ofSeconds(10))).isTrue();
            assertThat(billing.currentLeader()).contains("node-1");
        }
    }

    @Test
    void anObserverThatThrowsNeverStopsALock() throws Exception {
        CerberusMetrics broken = new CerberusMetrics() {
            @Override
            public WaitObserver acquiring(String engine, String mode, String name) {
                return new WaitObserver() {
                    @Override
                    public String holderNote() {
                        throw new IllegalStateException("tracing down");
                    }

                    @Override
                    public HoldObserver ended(AcquireOutcome outcome) {
                        throw new IllegalStateException("tracing down");
                    }
                };
            }
        };
        try (Cerberus cerberus =
                Cerberus.builder().engine(store).metrics(broken).build()) {
            try (Lease held = cerberus.lock("sturdy").acquire(Duration.ZERO)) {
                assertThat(held.isValid()).isTrue();
            }
        }
    }

    @Test
    void aHoldLostBeforeItsGrantWasAnsweredIsObservedLostNotReleased() throws Exception {
        Recorder recorder = new Recorder("");
        try (Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + UUID.randomUUID())
                .metrics(recorder)
                .build()) {
            cerberus.lock("open-the-engine").acquire(Duration.ZERO).close();
            io.cerberus.local.ScriptedEngineProvider.last.lostBeforeAnswered = true;
            recorder.calls.clear();
            Lease lease = cerberus.lock("overtaken").acquire(Duration.ZERO);
            assertThatThrownBy(lease::close).isInstanceOf(LockLostException.class);

            assertThat(recorder.calls)
                    .as("the loss came before the hold had its observer; the observer is told it when it is set")
                    .containsExactly(
                            "asked overtaken on " + Thread.currentThread().getName(), "ended GRANTED", "lost");
        }
    }

    private static void poll(String what, java.util.function.BooleanSupplier condition) {
        Await.until(what, Duration.ofSeconds(10), condition);
    }
}
