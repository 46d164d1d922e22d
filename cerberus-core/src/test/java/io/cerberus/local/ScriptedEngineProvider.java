package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.HandsOver;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.TakesTurns;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Test engine {@code scripted:NAME}: a mem: store whose renewals a test can refuse, fail or hold
 * up, and count. The last opened engine is {@link #last}; an open one by its URI, {@link #opened}.
 */
public final class ScriptedEngineProvider implements EngineProvider {
    /** The engine opened last. */
    public static volatile Scripted last;

    private static final java.util.Map<String, Scripted> OPEN = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param uri the engine's URI, {@code scripted:NAME}
     * @return the engine of that URI opened last and not closed yet
     */
    public static Scripted opened(String uri) {
        Scripted engine = OPEN.get(uri);
        if (engine == null) {
            throw new IllegalStateException("no open scripted engine " + uri);
        }
        return engine;
    }

    /** What renewals do. */
    public enum RenewalMode {
        NORMAL,
        REFUSE,
        UNREACHABLE,
        /** Throws an {@link Error}, as an engine with a bug might: no exception the renewer expects. */
        BROKEN
    }

    @Override
    public Set<String> schemes() {
        return Set.of("scripted");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return MemoryEngineProvider.CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        String store = context.uri().substring("scripted:".length());
        Scripted engine = new Scripted(context.uri(), MemoryStore.named("scripted-" + store), context.lossReporter());
        last = engine;
        OPEN.put(context.uri(), engine);
        return engine;
    }

    /** The scriptable engine. */
    public static final class Scripted implements LockEngine, RenewsInBatches, HandsOver, TakesTurns, NotifiesChanges {
        private static final java.time.Duration RACING_RECHECK = java.time.Duration.ofMillis(20);
        private final String uri;
        private final MemoryEngine inner;
        /** What renewals do now. */
        public volatile RenewalMode renewals = RenewalMode.NORMAL;
        /** renewAll calls. */
        public final AtomicInteger renewCalls = new AtomicInteger();
        /** Holds renewed, summed over calls. */
        public final AtomicInteger renewedHolds = new AtomicInteger();
        /** When each renewal call came ({@code System.nanoTime()}), in order. */
        public final java.util.Queue<Long> renewalTimes = new java.util.concurrent.ConcurrentLinkedQueue<>();
        /** When set, a renewal counts this down on entry and then waits for {@link #releaseRenewal}. */
        public final AtomicReference<CountDownLatch> renewalEntered = new AtomicReference<>();
        /** Lets a held-up renewal finish. */
        public final CountDownLatch releaseRenewal = new CountDownLatch(1);
        /** When set, the part of each lease the engine vouches for (see {@link LockEngine#validity}). */
        public volatile java.time.Duration validity;
        /** When set, the engine gives no fencing tokens and says this is why. */
        public volatile String whyNoFencing;
        /** Whether the core lines up this engine's exclusive waiters ({@link LinesUpLocally}). */
        public volatile boolean linesUp;
        /**
         * Whether exclusive waiters race (like Redis's): a busy answer does not queue the attempt,
         * and a waiter looks again after at most 20 ms instead of being woken by a release.
         */
        public volatile boolean racing;
        /** tryAcquire calls. */
        public final AtomicInteger acquireCalls = new AtomicInteger();
        /** While above zero, each tryAcquire counts it down and throws an {@link Error}, as an engine's bug might. */
        public final AtomicInteger acquireErrors = new AtomicInteger();
        /** While above zero, each tryAcquire counts it down and answers as usual before {@link #acquireErrors} applies. */
        public final AtomicInteger acquiresBeforeErrors = new AtomicInteger();
        /** Whether, lining up, it takes turns with other clients ({@link TakesTurns}): a release is told of the turn. */
        public volatile boolean takesTurns;
        /** With {@link #takesTurns}: whether a waiter of another client wants the lock (a release past the turn yields). */
        public volatile boolean othersWait;
        /** With {@link #takesTurns}: how long a streak of this client's holds keeps a lock others want. */
        public volatile java.time.Duration turn = java.time.Duration.ofHours(1);
        /** With {@link #takesTurns}: how long the line does not ask after a release that yielded. */
        public volatile java.time.Duration holdBack = java.time.Duration.ZERO;
        /** With {@link #takesTurns}: each release's {@code withinTurn}, in order. */
        public final java.util.Queue<Boolean> turnReleases = new java.util.concurrent.ConcurrentLinkedQueue<>();
        /** Whether async waiters are told of changes (off: they are asked again on the core's timer). */
        public volatile boolean notifiesChanges;
        /** While above zero, each registration of a change notice counts it down and fails as an unreachable engine does. */
        public final AtomicInteger changeNoticeFailures = new AtomicInteger();
        /** While above zero, each tryAcquire counts it down and fails as an unreachable engine does. */
        public final AtomicInteger unreachableAcquires = new AtomicInteger();
        /** When set, a tryAcquire counts this down on entry and then waits for {@link #releaseAcquire}. */
        public final AtomicReference<CountDownLatch> acquireEntered = new AtomicReference<>();
        /** Lets a held-up tryAcquire go on. */
        public final CountDownLatch releaseAcquire = new CountDownLatch(1);
        /** While above zero, each release (a hand-off too) counts it down and fails as an unreachable engine does. */
        public final AtomicInteger releaseFailures = new AtomicInteger();
        /** The attempt granted last, whose token {@link #losses()} reports on. */
        public volatile Acquisition lastGranted;
        /** When set, grants say the request that made them was sent this long before (as a hand-off's are). */
        public volatile java.time.Duration grantedAge;
        /** Whether the engine hands locks over ({@link HandsOver}). */
        public volatile boolean handsOver;
        /** handOver calls, and those that handed the lock over. */
        public final AtomicInteger handOverCalls = new AtomicInteger();

        public final AtomicInteger handedOver = new AtomicInteger();
        /** When set, a hand-off counts this down on entry and then waits for {@link #releaseHandOver}. */
        public final AtomicReference<CountDownLatch> handOverEntered = new AtomicReference<>();
        /** Lets a held-up hand-off finish. */
        public final CountDownLatch releaseHandOver = new CountDownLatch(1);

        /** Whether a grant is reported lost before it is answered (a loss that overtakes its grant). */
        public volatile boolean lostBeforeAnswered;

        private final io.cerberus.spi.LossReporter losses;

        Scripted(String uri, MemoryStore store, io.cerberus.spi.LossReporter losses) {
            this.uri = uri;
            this.inner = new MemoryEngine(uri, store);
            this.losses = losses;
        }

        @Override
        public Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
            renewCalls.incrementAndGet();
            renewalTimes.add(System.nanoTime());
            holdUp(renewalEntered, releaseRenewal);
            switch (renewals) {
                case REFUSE:
                    return Set.copyOf(attempts);
                case UNREACHABLE:
                    throw new EngineUnavailableException("scripted engine unreachable", null);
                case BROKEN:
                    throw new AssertionError("scripted engine broken");
                default:
                    renewedHolds.addAndGet(attempts.size());
                    return RenewsInBatches.oneByOne(this, attempts);
            }
        }

        @Override
        public String describe() {
            return inner.describe();
        }

        @Override
        public Set<Capability> capabilities() {
            if (whyNoFencing == null) {
                return inner.capabilities();
            }
            Set<Capability> capabilities = java.util.EnumSet.copyOf(inner.capabilities());
            capabilities.remove(Capability.FENCING);
            return capabilities;
        }

        @Override
        public java.time.Duration validity(java.time.Duration lease) {
            java.time.Duration shorter = validity;
            return shorter == null ? lease : shorter;
        }

        @Override
        public java.util.Optional<String> whyNot(Capability capability) {
            return capability == Capability.FENCING
                    ? java.util.Optional.ofNullable(whyNoFencing)
                    : java.util.Optional.empty();
        }

        @Override
        public <A> Optional<A> ability(Class<A> ability) {
            return offers(ability) ? Optional.of(ability.cast(this)) : Optional.empty();
        }

        /** The abilities a test switches on; the others it always has. */
        private boolean offers(Class<?> ability) {
            if (ability == TakesTurns.class) {
                return linesUp && takesTurns;
            }
            if (ability == HandsOver.class) {
                return linesUp && handsOver;
            }
            if (ability == LinesUpLocally.class) {
                return linesUp;
            }
            if (ability == NotifiesChanges.class) {
                return notifiesChanges;
            }
            return ability.isInstance(this);
        }

        /** In memory: the release and the grant under one lock of this engine, which no other call takes. */
        @Override
        public synchronized io.cerberus.spi.HandOff handOver(Acquisition holder, Acquisition next) {
            handOverCalls.incrementAndGet();
            holdUp(handOverEntered, releaseHandOver);
            if (takeOne(releaseFailures)) {
                throw new EngineUnavailableException("scripted engine unreachable", null);
            }
            if (!inner.release(holder)) {
                return io.cerberus.spi.HandOff.notHanded(false);
            }
            io.cerberus.spi.AcquireResult granted = inner.tryAcquire(next);
            if (granted instanceof io.cerberus.spi.AcquireResult.Granted g) {
                handedOver.incrementAndGet();
                return io.cerberus.spi.HandOff.handed(g.fencingToken());
            }
            inner.abandon(next);
            return io.cerberus.spi.HandOff.notHanded(true);
        }

        @Override
        public java.time.Duration turn() {
            return turn;
        }

        @Override
        public java.time.Duration holdBack() {
            return holdBack;
        }

        /** Past the turn, with another client waiting: released for all; else handed to {@code next} if there is one. */
        @Override
        public io.cerberus.spi.HandOff release(Acquisition holder, Acquisition next, boolean withinTurn) {
            turnReleases.add(withinTurn);
            if (!withinTurn && othersWait) {
                return inner.release(holder)
                        ? io.cerberus.spi.HandOff.yieldedToOthers()
                        : io.cerberus.spi.HandOff.notHanded(false);
            }
            return next == null ? io.cerberus.spi.HandOff.notHanded(inner.release(holder)) : handOver(holder, next);
        }

        /** @return whether {@code left} was above zero, counting it down if so */
        private static boolean takeOne(AtomicInteger left) {
            return left.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
        }

        /** When {@code entered} is set: counts it down (once) and waits for {@code release}. */
        private static void holdUp(AtomicReference<CountDownLatch> entered, CountDownLatch release) {
            CountDownLatch latch = entered.getAndSet(null);
            if (latch != null) {
                latch.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public io.cerberus.spi.AcquireResult tryAcquire(Acquisition attempt) {
            acquireCalls.incrementAndGet();
            holdUp(acquireEntered, releaseAcquire);
            if (takeOne(unreachableAcquires)) {
                throw new EngineUnavailableException("scripted engine unreachable", null);
            }
            boolean passes = takeOne(acquiresBeforeErrors);
            if (!passes && takeOne(acquireErrors)) {
                throw new AssertionError("scripted engine broken");
            }
            io.cerberus.spi.AcquireResult result = inner.tryAcquire(attempt);
            if (result instanceof io.cerberus.spi.AcquireResult.Granted) {
                lastGranted = attempt;
            }
            if (lostBeforeAnswered && result instanceof io.cerberus.spi.AcquireResult.Granted) {
                losses.lost(attempt.token(), "scripted: lost before its grant was answered");
            }
            if (racing && result instanceof io.cerberus.spi.AcquireResult.Busy) {
                inner.abandon(attempt);
                return io.cerberus.spi.AcquireResult.busy(RACING_RECHECK);
            }
            if (whyNoFencing != null && result instanceof io.cerberus.spi.AcquireResult.Granted) {
                return io.cerberus.spi.AcquireResult.granted(-1);
            }
            java.time.Duration age = grantedAge;
            if (age != null && result instanceof io.cerberus.spi.AcquireResult.Granted granted) {
                return io.cerberus.spi.AcquireResult.granted(granted.fencingToken(), age.toNanos());
            }
            return result;
        }

        @Override
        public void awaitChange(Acquisition attempt, java.time.Duration max) throws InterruptedException {
            if (racing) {
                Thread.sleep(Math.max(1, Math.min(max.toMillis(), RACING_RECHECK.toMillis())));
                return;
            }
            inner.awaitChange(attempt, max);
        }

        @Override
        public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
            if (takeOne(changeNoticeFailures)) {
                throw new EngineUnavailableException("scripted engine unreachable", null);
            }
            return inner.onChange(attempt, wake);
        }

        @Override
        public void abandon(Acquisition attempt) {
            inner.abandon(attempt);
        }

        @Override
        public boolean renew(Acquisition attempt) {
            return inner.renew(attempt);
        }

        @Override
        public boolean release(Acquisition attempt) {
            if (takeOne(releaseFailures)) {
                throw new EngineUnavailableException("scripted engine unreachable", null);
            }
            return inner.release(attempt);
        }

        /** Frees a hold in the store behind its client's back, as an expiry or an operator elsewhere would. */
        public void dropInStore(Acquisition attempt) {
            inner.release(attempt);
        }

        /** @return where this engine reports holds lost, uncertain or confirmed, as a real engine would */
        public io.cerberus.spi.LossReporter losses() {
            return losses;
        }

        @Override
        public boolean isLocked(io.cerberus.spi.LockKey key) {
            return inner.isLocked(key);
        }

        @Override
        public void close() {
            OPEN.remove(uri, this);
            inner.close();
        }
    }
}
