package io.cerberus.testkit;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.HandsOver;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.TakesTurns;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Serves {@code counting:<inner URI>}: the inner engine, with every call the core makes counted, so
 * a test can bound what a waiter sends (no polling storm) or prove that reentry sends nothing.
 * Counts what the core asks of the engine; engine modules bound their own wire traffic in their
 * own tests. It also keeps what the client opened it with ({@link Counting#openedWith()}), so a test
 * reads a setting from the built client, and can fail its monitoring reads, as health checks of an
 * unreachable engine do.
 */
public final class CountingEngineProvider implements EngineProvider {
    private static final AtomicReference<Counting> LAST = new AtomicReference<>();

    /** For {@link java.util.ServiceLoader}. */
    public CountingEngineProvider() {}

    /** @return the counting engine opened last in this JVM */
    public static Counting lastOpened() {
        Counting counting = LAST.get();
        if (counting == null) {
            throw new IllegalStateException("no counting: engine was opened");
        }
        return counting;
    }

    @Override
    public Set<String> schemes() {
        return Set.of("counting");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return Set.of();
    }

    @Override
    public LockEngine open(EngineContext context) {
        String inner = context.uri().substring("counting:".length());
        Counting counting = new Counting(Engines.open(inner, context.connectTimeout()), context);
        LAST.set(counting);
        return counting;
    }

    /** The counting wrapper. */
    public static final class Counting
            implements LockEngine, RenewsInBatches, HandsOver, TakesTurns, Inspects, NotifiesChanges {
        private final LockEngine inner;
        private final EngineContext context;
        private final AtomicLong calls = new AtomicLong();
        private final AtomicLong tryAcquires = new AtomicLong();
        private final AtomicLong busyAnswers = new AtomicLong();
        private final AtomicLong releases = new AtomicLong();
        private final AtomicLong renewals = new AtomicLong();
        private final AtomicLong monitoringReads = new AtomicLong();
        private volatile boolean unreachable;
        private final AtomicLong lateGrants = new AtomicLong();
        private volatile Duration lateBy = Duration.ZERO;

        Counting(LockEngine inner, EngineContext context) {
            this.inner = inner;
            this.context = context;
        }

        /** @return what the client opened this engine with: the URI, the connect timeout, the options */
        public EngineContext openedWith() {
            return context;
        }

        /** @return every call made to the engine so far */
        public long calls() {
            return calls.get();
        }

        /** @return the tryAcquire calls so far */
        public long tryAcquires() {
            return tryAcquires.get();
        }

        /** @return the tryAcquire calls answered busy so far (on a fair engine, each put its attempt in the queue) */
        public long busyAnswers() {
            return busyAnswers.get();
        }

        /** @return the release calls so far */
        public long releases() {
            return releases.get();
        }

        /** @return the isLocked calls so far: monitoring reads, such as the failover's health checks */
        public long monitoringReads() {
            return monitoringReads.get();
        }

        /**
         * Makes monitoring reads fail as on an engine that cannot be reached, so health checks
         * fail, or pass again.
         *
         * @param failing whether isLocked fails
         */
        public void failMonitoringReads(boolean failing) {
            unreachable = failing;
        }

        /** @return the renew and renewAll calls so far */
        public long renewals() {
            return renewals.get();
        }

        /**
         * Makes the next {@code count} grants reach the core {@code late} after the engine made
         * them, as an answer held up on its way back (or a caller paused during its call) would.
         *
         * @param count how many grants to hold up
         * @param late by how long
         */
        public void delayGrants(int count, Duration late) {
            lateBy = late;
            lateGrants.set(count);
        }

        @Override
        public String describe() {
            return "counting:" + inner.describe();
        }

        @Override
        public Set<Capability> capabilities() {
            return inner.capabilities();
        }

        @Override
        public Duration validity(Duration lease) {
            return inner.validity(lease);
        }

        @Override
        public java.util.Optional<Duration> silentHolderExpiry(Duration lease) {
            return inner.silentHolderExpiry(lease);
        }

        @Override
        public java.util.Optional<String> whyNot(Capability capability) {
            return inner.whyNot(capability);
        }

        @Override
        public AcquireResult tryAcquire(Acquisition attempt) {
            calls.incrementAndGet();
            tryAcquires.incrementAndGet();
            AcquireResult result = inner.tryAcquire(attempt);
            if (result instanceof AcquireResult.Busy) {
                busyAnswers.incrementAndGet();
            }
            if (result instanceof AcquireResult.Granted && lateGrants.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
                holdUp(lateBy);
            }
            return result;
        }

        @Override
        public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
            calls.incrementAndGet();
            inner.awaitChange(attempt, max);
        }

        @Override
        public void abandon(Acquisition attempt) {
            calls.incrementAndGet();
            inner.abandon(attempt);
        }

        @Override
        public boolean renew(Acquisition attempt) {
            calls.incrementAndGet();
            renewals.incrementAndGet();
            return inner.renew(attempt);
        }

        @Override
        public Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
            calls.incrementAndGet();
            renewals.incrementAndGet();
            return inner.ability(RenewsInBatches.class).orElseThrow().renewAll(attempts);
        }

        private static void holdUp(Duration late) {
            long until = System.nanoTime() + late.toNanos();
            boolean interrupted = false;
            for (long left = late.toNanos(); left > 0; left = until - System.nanoTime()) {
                try {
                    java.util.concurrent.TimeUnit.NANOSECONDS.sleep(
                            left); // the answer's time on the way back, not a wait for anything
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public boolean release(Acquisition attempt) {
            calls.incrementAndGet();
            releases.incrementAndGet();
            return inner.release(attempt);
        }

        @Override
        public io.cerberus.spi.HandOff handOver(Acquisition holder, Acquisition next) {
            calls.incrementAndGet();
            return inner.ability(HandsOver.class).orElseThrow().handOver(holder, next);
        }

        @Override
        public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
            return inner.ability(NotifiesChanges.class).orElseThrow().onChange(attempt, wake);
        }

        @Override
        public Duration firstBackoff() {
            return inner.ability(LinesUpLocally.class)
                    .map(LinesUpLocally::firstBackoff)
                    .orElse(Duration.ZERO);
        }

        @Override
        public Duration maxBackoff() {
            return inner.ability(LinesUpLocally.class)
                    .map(LinesUpLocally::maxBackoff)
                    .orElse(Duration.ZERO);
        }

        @Override
        public Duration turn() {
            return inner.ability(TakesTurns.class).orElseThrow().turn();
        }

        @Override
        public Duration holdBack() {
            return inner.ability(TakesTurns.class).orElseThrow().holdBack();
        }

        @Override
        public io.cerberus.spi.HandOff release(Acquisition holder, Acquisition next, boolean withinTurn) {
            calls.incrementAndGet();
            releases.incrementAndGet();
            return inner.ability(TakesTurns.class).orElseThrow().release(holder, next, withinTurn);
        }

        @Override
        public boolean isLocked(LockKey key) {
            calls.incrementAndGet();
            monitoringReads.incrementAndGet();
            if (unreachable) {
                throw new EngineUnavailableException(
                        "counting:" + inner.describe() + " is made unreachable by the test", null);
            }
            return inner.isLocked(key);
        }

        @Override
        public List<String> checkHealth(LockKey probe) {
            calls.incrementAndGet();
            return inner.checkHealth(probe);
        }

        @Override
        public List<LockInfo> inspect(String namespace, String prefix) {
            calls.incrementAndGet();
            return inner.ability(Inspects.class).orElseThrow().inspect(namespace, prefix);
        }

        /** Counted where the inner engine has the ability, absent where it has not. */
        @Override
        public <A> java.util.Optional<A> ability(Class<A> ability) {
            return inner.ability(ability).isPresent() && ability.isInstance(this)
                    ? java.util.Optional.of(ability.cast(this))
                    : java.util.Optional.empty();
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
