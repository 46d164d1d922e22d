package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.RenewsInBatches;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A standby that was down when its client was built: opened at its first use once it is up, at most
 * one opening a second in between, what it shows before it opens, and everything going to the
 * engine once it has.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DeferredEngineTest {
    private static final Set<Capability> DECLARED = Set.of(Capability.INSPECT);
    private static final LockKey KEY = new LockKey("ns", "stock");

    private final String name = "deferred-" + UUID.randomUUID();
    private final String uri = "switchable:" + name;

    @AfterEach
    void bringBack() {
        SwitchableEngineProvider.down(name, false);
        SwitchableEngineProvider.unsafe(name, false);
    }

    /** A deferred engine as a client makes it: its first opening failed, just now. */
    private DeferredEngine downAtStart() {
        SwitchableEngineProvider.down(name, true);
        EngineContext context = new EngineContext(uri, Duration.ofSeconds(1), (token, reason) -> {});
        EngineUnavailableException failure = null;
        try {
            EngineRegistry.open(context);
        } catch (EngineUnavailableException e) {
            failure = e;
        }
        assertThat(failure).as("the engine is down").isNotNull();
        return new DeferredEngine(context, DECLARED, failure);
    }

    private static Acquisition attempt(String token) {
        return new Acquisition(KEY, LockMode.EXCLUSIVE, token, "test", Duration.ofSeconds(30));
    }

    /** Calls {@code tryAcquire} until the engine opens; @return the nanoTime it opened at */
    private static long openedAt(DeferredEngine engine, Acquisition attempt) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
                return System.nanoTime();
            } catch (EngineUnavailableException | UnsafeEngineException e) {
                assertThat(System.nanoTime()).as("opened within 5 s").isLessThan(deadline);
                Thread.sleep(20);
            }
        }
    }

    @Test
    void untilItOpensItShowsItsUriAndDeclaredCapabilitiesAndWithdrawsNothing() {
        DeferredEngine engine = downAtStart();
        assertThat(engine.isOpen()).isFalse();
        assertThat(engine.describe()).isEqualTo(uri);
        assertThat(engine.capabilities()).isEqualTo(DECLARED);
        assertThat(engine.whyNot(Capability.FAIR)).isEmpty();
        engine.abandon(attempt("a")); // nothing to withdraw on an engine never reached: no failure
        assertThat(engine.isOpen()).isFalse();
    }

    @Test
    void callsWithinASecondOfAFailedOpeningFailAtOnceWithItsFailureThenItOpens() throws Exception {
        long start = System.nanoTime();
        DeferredEngine engine = downAtStart();
        SwitchableEngineProvider.down(name, false);
        assertThatThrownBy(() -> engine.tryAcquire(attempt("early")))
                .as("up now, but the last opening failed under a second ago: not tried again yet")
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("engine " + uri + " could not be reached")
                .hasMessageContaining("at most once a second")
                .hasMessageContaining("is down");
        long opened = openedAt(engine, attempt("first"));
        assertThat(Duration.ofNanos(opened - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(engine.isOpen()).isTrue();
        assertThat(engine.capabilities())
                .as("the open engine's capabilities, not the declared ones")
                .containsExactlyInAnyOrder(
                        Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.INSPECT);
    }

    @Test
    void anOpeningThatFindsTheEngineUnsafeFailsAsUnsafeUntilItIsTriedAgain() throws Exception {
        DeferredEngine engine = downAtStart();
        SwitchableEngineProvider.down(name, false);
        SwitchableEngineProvider.unsafe(name, true);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        UnsafeEngineException unsafe = null;
        while (unsafe == null) {
            try {
                engine.tryAcquire(attempt("a"));
            } catch (UnsafeEngineException e) {
                unsafe = e;
            } catch (EngineUnavailableException e) {
                assertThat(System.nanoTime()).as("tried again within 5 s").isLessThan(deadline);
                Thread.sleep(20);
            }
        }
        assertThat(unsafe).hasMessageContaining("set up against a guarantee");
        SwitchableEngineProvider.unsafe(name, false);
        assertThatThrownBy(() -> engine.tryAcquire(attempt("b")))
                .as("within the second: the last failure again, as unsafe, not as unreachable")
                .isInstanceOf(UnsafeEngineException.class)
                .hasMessageContaining("set up against a guarantee");
        openedAt(engine, attempt("c"));
    }

    @Test
    void onceOpenEveryCallGoesToTheEngineItOpened() throws Exception {
        DeferredEngine engine = downAtStart();
        SwitchableEngineProvider.down(name, false);
        Acquisition held = attempt("held");
        openedAt(engine, held);
        assertThat(engine.isLocked(KEY)).isTrue();
        Acquisition other = attempt("other");
        assertThat(engine.tryAcquire(other)).isInstanceOf(AcquireResult.Busy.class);
        long waitFrom = System.nanoTime();
        engine.awaitChange(other, Duration.ofMillis(300));
        assertThat(Duration.ofNanos(System.nanoTime() - waitFrom))
                .as("nothing changed: the engine's wait, not an immediate return")
                .isGreaterThanOrEqualTo(Duration.ofMillis(100));
        assertThat(engine.renew(held)).isTrue();
        assertThat(engine.renew(other)).as("not held: not renewed").isFalse();
        assertThat(engine.release(other)).as("not held: not released").isFalse();
        assertThat(engine.validity(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(30));
        assertThat(engine.silentHolderExpiry(Duration.ofSeconds(30))).contains(Duration.ofSeconds(30));
        assertThat(engine.checkHealth(KEY)).containsExactly(uri + " is a test engine");
        assertThat(engine.ability(io.cerberus.spi.Inspects.class)).isPresent();
        assertThat(engine.ability(RenewsInBatches.class)).isEmpty();
        engine.abandon(other);
        assertThat(engine.release(held)).isTrue();
        assertThat(engine.isLocked(KEY)).isFalse();
        Acquisition withdrawn = attempt("withdrawn");
        assertThat(engine.tryAcquire(withdrawn)).isInstanceOf(AcquireResult.Granted.class);
        engine.abandon(withdrawn);
        assertThat(engine.isLocked(KEY)).as("withdrawn in the engine").isFalse();
        SwitchableEngineProvider.down(name, true);
        assertThatThrownBy(() -> engine.tryAcquire(attempt("down")))
                .as("the engine's own failure now, not the deferred one's")
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageNotContaining("at most once a second");
    }

    @Test
    void aClosedDeferredEngineIsNotOpenedAgain() throws Exception {
        DeferredEngine engine = downAtStart();
        SwitchableEngineProvider.down(name, false);
        engine.close();
        java.util.concurrent.CompletableFuture<Throwable> other =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        engine.tryAcquire(attempt("late"));
                        return null;
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
        assertThat(other.get(5, TimeUnit.SECONDS))
                .as("on another thread too: the close let go of the opening lock")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the engine " + uri + " is closed");
        assertThat(engine.isOpen()).isFalse();
        assertThat(SwitchableEngineProvider.closed(name))
                .as("nothing was open to close")
                .isZero();
    }

    @Test
    void closingAnOpenedDeferredEngineClosesTheEngineItOpened() throws Exception {
        DeferredEngine engine = downAtStart();
        SwitchableEngineProvider.down(name, false);
        openedAt(engine, attempt("a"));
        engine.close();
        assertThat(SwitchableEngineProvider.closed(name)).isEqualTo(1);
    }
}
