package io.cerberus.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.cerberus.Cerberus;
import io.cerberus.LockLostException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The contract Spring Integration's lock registries keep, checked on {@link CerberusLockRegistry}
 * over one engine: a subclass says which (its real server started by the subclass). Each test has
 * its own key; a second registry on a second Cerberus client stands for another process.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
abstract class AbstractLockRegistryContractTest {
    private static final Duration LEASE = Duration.ofSeconds(1);

    private Cerberus cerberus;
    private Cerberus otherProcess;
    private CerberusLockRegistry registry;
    private CerberusLockRegistry otherRegistry;
    private ExecutorService threads;
    private String key;

    /** @return the engine URI the registries run on */
    abstract String uri();

    @BeforeEach
    void open() {
        cerberus = Cerberus.builder().engine(uri()).defaultLease(LEASE).build();
        otherProcess = Cerberus.builder().engine(uri()).defaultLease(LEASE).build();
        registry = new CerberusLockRegistry(cerberus, "si-contract");
        otherRegistry = new CerberusLockRegistry(otherProcess, "si-contract");
        threads = Executors.newCachedThreadPool();
        key = "key-" + UUID.randomUUID();
    }

    @AfterEach
    void close() {
        threads.shutdownNow();
        otherProcess.close();
        cerberus.close();
    }

    @Test
    void locksAreReentrantPerThreadAndFreedByTheLastUnlock() throws Exception {
        DistributedLock lock = registry.obtain(key);
        assertThat(registry.obtain(key)).isSameAs(lock);
        lock.lock();
        assertThat(lock.tryLock()).as("nested tryLock").isTrue();
        lock.lockInterruptibly();
        lock.unlock();
        lock.unlock();
        assertThat(otherRegistry.obtain(key).tryLock())
                .as("another process while held once")
                .isFalse();
        lock.unlock();
        Lock other = otherRegistry.obtain(key);
        assertThat(other.tryLock(5, TimeUnit.SECONDS))
                .as("another process after the last unlock")
                .isTrue();
        other.unlock();
    }

    @Test
    void aHeldLockIsRefusedToAnotherThreadAndAnotherProcessUntilReleased() throws Exception {
        DistributedLock lock = registry.obtain(key);
        lock.lock();
        assertThat(inThread(() -> lock.tryLock(100, TimeUnit.MILLISECONDS)))
                .as("another thread")
                .isFalse();
        Lock other = otherRegistry.obtain(key);
        assertThat(other.tryLock(100, TimeUnit.MILLISECONDS))
                .as("another process")
                .isFalse();
        Future<Long> waiting = threads.submit(() -> {
            if (!other.tryLock(10, TimeUnit.SECONDS)) {
                return -1L;
            }
            long got = System.nanoTime();
            other.unlock();
            return got;
        });
        long released = System.nanoTime();
        lock.unlock();
        long got = waiting.get(10, TimeUnit.SECONDS);
        assertThat(got).as("the waiting process gets it").isNotEqualTo(-1L);
        assertThat(Duration.ofNanos(got - released)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void unlockByAThreadThatDoesNotHoldTheLockIsRefused() throws Exception {
        DistributedLock lock = registry.obtain(key);
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("does not hold lock '" + key + "'");
        lock.lock();
        Future<?> stranger = threads.submit(lock::unlock);
        assertThatThrownBy(() -> stranger.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only its holder unlocks it");
        assertThat(otherRegistry.obtain(key).tryLock()).as("still held").isFalse();
        lock.unlock();
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void anInterruptEndsTheWaitAndLeavesTheLockFree() throws Exception {
        Lock held = otherRegistry.obtain(key);
        held.lock();
        DistributedLock lock = registry.obtain(key);
        CompletableFuture<Thread> waiter = new CompletableFuture<>();
        Future<Throwable> outcome = threads.submit(() -> {
            waiter.complete(Thread.currentThread());
            try {
                lock.lockInterruptibly();
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        Thread thread = waiter.get(5, TimeUnit.SECONDS);
        await(
                "the waiter to block",
                () -> thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING);
        thread.interrupt();
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        held.unlock();
        assertThat(lock.tryLock(5, TimeUnit.SECONDS))
                .as("free after the interrupted wait")
                .isTrue();
        lock.unlock();
    }

    @Test
    void aLockTakenWithATtlExpiresAndItsUnlockReportsTheLoss() throws Exception {
        DistributedLock lock = registry.obtain(key);
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofMillis(600))).isTrue();
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(UnsupportedOperationException.class);
        long start = System.nanoTime();
        DistributedLock other = otherRegistry.obtain(key);
        assertThat(other.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .as("another process once the ttl ran out")
                .isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(300), Duration.ofSeconds(3));
        other.unlock();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("was lost while held")
                .hasCauseInstanceOf(LockLostException.class);
        lock.lock(Duration.ofSeconds(5));
        lock.unlock();
    }

    @Test
    void renewLockConfirmsTheHoldWhichCerberusRenewsPastSeveralLeases() throws Exception {
        DistributedLock lock = registry.obtain(key);
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalStateException.class);
        lock.lock();
        long token = registry.lease(key).fencingToken();
        long end = System.nanoTime() + 3 * LEASE.toNanos();
        while (System.nanoTime() < end) {
            registry.renewLock(key);
            registry.renewLock(key, Duration.ofSeconds(30));
            Thread.sleep(100);
        }
        assertThat(registry.lease(key).isValid()).isTrue();
        assertThat(registry.lease(key).fencingToken()).isEqualTo(token);
        assertThat(otherRegistry.obtain(key).tryLock())
                .as("still held after three leases")
                .isFalse();
        Future<?> stranger = threads.submit(() -> registry.renewLock(key));
        assertThatThrownBy(() -> stranger.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> registry.renewLock(key, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.lease(key).close()).isInstanceOf(UnsupportedOperationException.class);
        lock.unlock();
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aLeaseLostWhileHeldIsLoggedEndsNestedAcquisitionsAndMakesUnlockThrow() throws Exception {
        Logger log = (Logger) LoggerFactory.getLogger(CerberusRegistryLock.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        log.addAppender(logged);
        try {
            DistributedLock lock = registry.obtain(key);
            lock.lock();
            long token = registry.lease(key).fencingToken();
            assertThat(otherProcess.forceRelease("si-contract:" + key, token)).isTrue();
            await("the holder to learn the loss", () -> !registry.lease(key).isValid());
            await(
                    "the loss to be logged",
                    () -> logged.list.stream()
                            .anyMatch(event -> event.getFormattedMessage().contains("lock '" + key + "' was lost")));
            assertThat(lock.tryLock()).as("a nested tryLock on a lost hold").isFalse();
            assertThatThrownBy(lock::unlock)
                    .isInstanceOf(ConcurrentModificationException.class)
                    .hasCauseInstanceOf(LockLostException.class);
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).as("taken again").isTrue();
            assertThat(registry.lease(key).fencingToken()).isGreaterThan(token);
            lock.unlock();
        } finally {
            log.detachAppender(logged);
        }
    }

    @Test
    void expireUnusedOlderThanDropsOnlyLocksNeitherHeldNorRecentlyUsed() throws Exception {
        DistributedLock idle = registry.obtain(key + "-idle");
        DistributedLock held = registry.obtain(key + "-held");
        held.lock();
        registry.expireUnusedOlderThan(60_000);
        assertThat(registry.obtain(key + "-idle")).as("used within the age").isSameAs(idle);
        long used = System.currentTimeMillis();
        await("time to pass", () -> System.currentTimeMillis() > used + 20);
        registry.expireUnusedOlderThan(10);
        assertThat(registry.obtain(key + "-idle")).as("unused for longer").isNotSameAs(idle);
        assertThat(registry.obtain(key + "-held")).as("held").isSameAs(held);
        held.unlock();
        assertThatThrownBy(() -> registry.expireUnusedOlderThan(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keysAreNonBlankStrings() {
        assertThatThrownBy(() -> registry.obtain(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock key must not be null");
        assertThatThrownBy(() -> registry.obtain(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> registry.obtain(42L))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be a String")
                .hasMessageContaining("java.lang.Long");
        assertThatThrownBy(() -> registry.obtain("a\u0000b")).isInstanceOf(IllegalArgumentException.class);
    }

    private <T> T inThread(java.util.concurrent.Callable<T> task) throws Exception {
        return threads.submit(task).get(10, TimeUnit.SECONDS);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited 10s for " + what);
            }
            Thread.sleep(10);
        }
    }
}
