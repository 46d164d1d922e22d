package io.cerberus.internal;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.HandsOver;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.TakesTurns;
import io.cerberus.spi.support.FailureEpisode;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The holds of one client not yet released, by token, and the lines of its waiters: where an
 * engine's loss reports find their hold, and where a release hands the lock to the next waiter of
 * this client when the engine can ({@link #releaseInEngine}).
 *
 * <p>Invariants: a hold is here from its grant until it is released, given back or lost; a line's
 * {@code heldBy} is cleared whenever its hold leaves, so no waiter waits on a hold that is gone.
 */
final class LiveHolds {
    private static final System.Logger LOG = System.getLogger(LiveHolds.class.getName());
    private final Map<String, Holding> live = new ConcurrentHashMap<>();
    /**
     * Losses reported for a token not here: an engine may report a grant lost before its answer
     * reaches {@link #add} (a session or lease that ends while the grant is on its way). The
     * others are reports for holds already gone; the oldest are dropped past {@link #MAX_LOSSES_BEFORE_HOLD}.
     */
    private final Map<String, String> lossesBeforeHold =
            java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > MAX_LOSSES_BEFORE_HOLD;
                }
            });

    private static final int MAX_LOSSES_BEFORE_HOLD = 1024;
    /** This client's exclusive waiters per engine and lock, for engines that line them up here. */
    private final LocalLines lines = new LocalLines(this::liveFor);
    /** Failures to withdraw an attempt, by engine name: logged once per episode. */
    private final Map<String, FailureEpisode> withdrawals = new ConcurrentHashMap<>();

    /** @return how many more nanoseconds {@code token} is a live hold of this client by its local lease; 0 when it is none */
    private long liveFor(String token) {
        Holding holding = live.get(token);
        if (holding == null) {
            return 0;
        }
        return holding.expires() ? Math.max(0, holding.validUntilNanos() - System.nanoTime()) : Long.MAX_VALUE;
    }

    LocalLines lines() {
        return lines;
    }

    void add(Holding holding) {
        String token = holding.acquisition.token();
        live.put(token, holding);
        String lostEarly = lossesBeforeHold.remove(token);
        if (lostEarly != null) {
            holding.markLost(lostEarly, null);
        }
    }

    /** @return where the engines report holds lost, uncertain or confirmed again */
    LossReporter reporter() {
        return new LossReporter() {
            @Override
            public void lost(String token, String reason) {
                Holding holding = live.get(token);
                if (holding == null) {
                    // kept for add(); looked up again, as add() may have come between (whoever removes the entry marks)
                    lossesBeforeHold.put(token, reason);
                    holding = live.get(token);
                    if (holding == null || lossesBeforeHold.remove(token) == null) {
                        return;
                    }
                }
                holding.markLost(reason, null);
            }

            @Override
            public void uncertain(String token, String reason) {
                Holding holding = live.get(token);
                if (holding != null) {
                    holding.markUncertain();
                    // the engine has said once why all its holds are uncertain; one line per hold would repeat it
                    LOG.log(Level.DEBUG, holding.described() + " is uncertain: " + reason);
                }
            }

            @Override
            public void confirmed(String token) {
                Holding holding = live.get(token);
                if (holding != null) {
                    holding.confirmed();
                }
            }
        };
    }

    /**
     * A hold was lost; it stays in the thread map until unlocked, so unlock() can say so. Logged at
     * INFO: the holder is told by {@link io.cerberus.LockLostException} and its loss listeners, and
     * the loss is counted in the metrics; a WARNING too would report one event twice.
     */
    void lost(Holding holding, io.cerberus.LockLostException reason) {
        live.remove(holding.acquisition.token());
        lines.ended(holding.engine, holding.acquisition.key(), holding.acquisition.token());
        LOG.log(Level.INFO, reason.getMessage());
    }

    /**
     * Releases a hold in its engine. When the engine hands locks over and the hold's line has a
     * head asleep on its turn, the release grants the lock to that head in the same request
     * ({@link LocalLines#handOverFrom}). An engine that takes turns with other clients is told where
     * the line stands ({@link LocalLines#turnAt}), and a release that yielded to another client
     * holds the line back.
     *
     * @param holding the hold
     * @return whether the engine still had the hold
     */
    boolean releaseInEngine(Holding holding) {
        LockEngine engine = holding.engine.engine();
        Acquisition holder = holding.acquisition;
        if (holder.mode() != LockMode.EXCLUSIVE) {
            return engine.release(holder);
        }
        Optional<TakesTurns> turns = engine.ability(TakesTurns.class);
        if (turns.isPresent()) {
            LocalLines.Turn turn = lines.turnAt(
                    holding.engine, holder.key(), holder.token(), turns.get().turn());
            HandOff done =
                    release(holding, turn.handOver(), next -> turns.get().release(holder, next, turn.withinTurn()));
            if (done.yielded()) {
                lines.holdBack(
                        holding.engine,
                        holder.key(),
                        holder.token(),
                        turns.get().holdBack());
            }
            return done.released();
        }
        Optional<HandsOver> handsOver = engine.ability(HandsOver.class);
        LocalLines.HandOver handOver =
                handsOver.isPresent() ? lines.handOverFrom(holding.engine, holder.key(), holder.token()) : null;
        if (handOver == null) {
            return engine.release(holder);
        }
        return release(holding, handOver, next -> handsOver.get().handOver(holder, next))
                .released();
    }

    /** Releases through {@code release}, handing the lock to the head of {@code handOver} (if any) when the engine agrees. */
    private HandOff release(Holding holding, LocalLines.HandOver handOver, Function<Acquisition, HandOff> release) {
        if (handOver == null) {
            return release.apply(null);
        }
        long sentAt = System.nanoTime();
        HandOff done = null;
        try {
            done = release.apply(handOver.next());
        } finally {
            boolean handed = done != null && done.handed();
            if (!lines.handOverEnded(handOver, handed, handed ? done.fencingToken() : -1, sentAt)) {
                // the waiter gave up while the lock was handed to it
                abandonQuietly(holding.engine, handOver.next());
            }
        }
        return done;
    }

    void forget(Holding holding) {
        live.remove(holding.acquisition.token());
        lines.ended(holding.engine, holding.acquisition.key(), holding.acquisition.token());
    }

    /** Withdraws an attempt; a failure is logged once per episode of failures on that engine, not once per attempt. */
    void abandonQuietly(EngineHandle engine, Acquisition attempt) {
        FailureEpisode withdrawals = this.withdrawals.computeIfAbsent(
                engine.name(), name -> new FailureEpisode(LOG, "withdraw attempts from engine '" + name + "'"));
        try {
            engine.engine().abandon(attempt);
            withdrawals.succeeded();
        } catch (RuntimeException e) {
            withdrawals.failed(() -> attempt + "; if it was granted the engine frees it when its lease ends", e);
        }
    }

    /** Closes the lines and releases every hold still live (the client is closing). */
    void close() {
        lines.close();
        for (Holding holding : List.copyOf(live.values())) {
            try {
                holding.release();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "while closing, " + holding.described() + ": " + e.getMessage());
            }
        }
    }
}
