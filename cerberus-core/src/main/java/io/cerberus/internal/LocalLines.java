package io.cerberus.internal;

import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.support.Backoff;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;

/**
 * The exclusive waiters of one client, lined up per engine and lock, for engines whose waiters
 * would otherwise race in the store ({@link io.cerberus.spi.LinesUpLocally}).
 *
 * <p><b>Rules.</b> An attempt that may wait enters its lock's line before its first try and leaves
 * when granted or giving up. Only the head asks the engine, and only while no hold of this client
 * is known on the lock: a grant, or a busy answer naming a live hold of this client, records that
 * hold's token in the line ({@code heldBy}) until the hold ends, which wakes the head: a thread
 * that releases and asks again goes to the back. A head told busy by a hold elsewhere pauses as told or by the backoff.
 *
 * <p><b>Hand-off and turns.</b> For an engine that {@link io.cerberus.spi.HandsOver hands locks
 * over}, a release may grant the sleeping head in the same request ({@link #handOverFrom}), at most
 * {@link #HAND_OFFS_IN_A_ROW} times in a row so another client's waiter gets its chance. An engine
 * that {@link io.cerberus.spi.TakesTurns sees other clients' waiters} is told whether this client's
 * streak of holds goes on ({@link #turnAt}); after a release that yielded, the line
 * {@linkplain #holdBack holds back}. A head that gave up during a hand-off has the hold released.
 *
 * <p><b>Why it is safe.</b> The line only decides who of this client asks; the engine alone decides
 * who holds. A stale {@code heldBy} is found at the next recheck (at most {@link #RECHECK_NANOS});
 * a hold-back ends by the clock; every way out of the acquire loop leaves the line. A {@code tryLock()} without
 * a wait does not line up: it may barge, as {@code ReentrantLock.tryLock()} does.
 *
 * <p><b>Costs.</b> Uncontended, a map entry from grant to release; a hand-off between this client's
 * threads, one acquire and one release in the store; across clients, one asker per client and lock.
 */
final class LocalLines {
    /** How long a waiter sleeps at most before it looks at its place and {@code heldBy} again. */
    static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Hand-offs in a row within this client before a release frees the lock for all. */
    static final int HAND_OFFS_IN_A_ROW = 4;

    private final Map<LineKey, Line> lines = new ConcurrentHashMap<>();
    private final ToLongFunction<String> liveFor;
    private volatile boolean closed;

    /**
     * @param liveFor how many more nanoseconds a token is a hold of this client, by its local lease
     *     (not released, not lost); 0 or less when it is none
     */
    LocalLines(ToLongFunction<String> liveFor) {
        this.liveFor = liveFor;
    }

    private record LineKey(Object engine, LockKey key) {}

    /** The attempts waiting for one lock on one engine, and the hold of this client they wait for. */
    private static final class Line {
        final ReentrantLock lock = new ReentrantLock();
        /** First come, first asked; guarded by {@link #lock}. */
        final ArrayDeque<Ticket> queue = new ArrayDeque<>();
        /** The token of this client's hold of the lock, or null; guarded by {@link #lock}. */
        String heldBy;
        /** Hand-offs in a row that led to the hold {@link #heldBy}; guarded by {@link #lock}. */
        int handOffs;
        /** Whether this client's threads have held the lock one after another since {@link #streakSince}; guarded by {@link #lock}. */
        boolean inStreak;

        long streakSince;
        /** Until when (nanoTime) the head does not ask, after a release that yielded to another client; guarded by {@link #lock}. */
        long holdBackUntil;

        boolean holdingBack;

        /** The hold {@code token} of this client now holds the lock; caller holds {@link #lock}. */
        void heldBy(String token) {
            heldBy = token;
            if (!inStreak) {
                inStreak = true;
                streakSince = System.nanoTime();
            }
        }

        /** @return nanoseconds the head still holds back for, or 0; caller holds {@link #lock} */
        long holdingBackFor() {
            if (!holdingBack) {
                return 0;
            }
            long left = holdBackUntil - System.nanoTime();
            if (left <= 0) {
                holdingBack = false;
                return 0;
            }
            return left;
        }
    }

    /**
     * Puts a new attempt at the end of its lock's line.
     *
     * @param engine the engine the attempt asks
     * @param attempt the attempt
     * @param policy how the head backs off after a busy answer
     * @return the attempt's place
     */
    Ticket enter(Object engine, Acquisition attempt, LinesUpLocally policy) {
        Ticket[] entered = new Ticket[1];
        lines.compute(new LineKey(engine, attempt.key()), (k, line) -> {
            Line joined = line == null ? new Line() : line;
            joined.lock.lock();
            try {
                entered[0] = new Ticket(k, joined, attempt, policy.firstBackoff(), policy.maxBackoff());
                joined.queue.addLast(entered[0]);
            } finally {
                joined.lock.unlock();
            }
            return joined;
        });
        return entered[0];
    }

    /**
     * An attempt that did not line up (a try without a wait) was granted: the line, if any, waits
     * for that hold.
     *
     * @param engine the engine that granted it
     * @param key the lock
     * @param token the hold's token
     */
    void grantedOutOfLine(Object engine, LockKey key, String token) {
        lines.computeIfPresent(new LineKey(engine, key), (k, line) -> {
            line.lock.lock();
            try {
                line.heldBy(token);
                line.handOffs = 0;
            } finally {
                line.lock.unlock();
            }
            return line;
        });
    }

    /**
     * A hold of this client ended (released, lost): if the line waits for it, the head asks now.
     *
     * @param engine the engine of the hold
     * @param key the lock
     * @param token the hold's token
     */
    void ended(Object engine, LockKey key, String token) {
        lines.computeIfPresent(new LineKey(engine, key), (k, line) -> {
            line.lock.lock();
            try {
                if (!token.equals(line.heldBy)) {
                    return line;
                }
                line.heldBy = null;
                if (line.queue.isEmpty()) {
                    return null;
                }
                line.queue.peekFirst().wake();
                return line;
            } finally {
                line.lock.unlock();
            }
        });
    }

    /**
     * A hand-off to the head of a line, begun by {@link #handOverFrom}.
     *
     * @param ticket the head's place
     * @param next the head's attempt, which the release grants if the engine agrees
     */
    record HandOver(Ticket ticket, Acquisition next) {}

    /**
     * Starts a hand-off of this client's hold {@code token} to the head of its line, if the head
     * sleeps on its turn and fewer than {@link #HAND_OFFS_IN_A_ROW} hand-offs led to the hold.
     * Until {@link #handOverEnded} the head waits for the outcome.
     *
     * @param engine the engine of the hold
     * @param key the lock
     * @param token the releasing hold's token
     * @return the hand-off to try, or null to release as usual
     */
    HandOver handOverFrom(Object engine, LockKey key, String token) {
        Line line = lines.get(new LineKey(engine, key));
        if (line == null || closed) {
            return null;
        }
        line.lock.lock();
        try {
            Ticket head = line.queue.peekFirst();
            if (head == null
                    || !token.equals(line.heldBy)
                    || line.handOffs >= HAND_OFFS_IN_A_ROW
                    || !head.waitingForTurn()
                    || head.handing
                    || head.handed) {
                return null;
            }
            head.handing = true;
            return new HandOver(head, head.attempt);
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * Where a release of this client's hold {@code token} stands in its line, for an engine that
     * takes turns with other clients.
     *
     * @param handOver the hand-off to try (the head sleeps on its turn), begun as by
     *     {@link #handOverFrom} but without a count; null when no head is ready
     * @param withinTurn whether the streak of this client's holds that the releasing hold belongs to
     *     began less than the turn ago
     */
    record Turn(HandOver handOver, boolean withinTurn) {}

    /**
     * As {@link #handOverFrom} for an engine that takes turns: the hand-off is offered however many
     * came before, and the engine is told whether the streak of this client's holds is within its turn.
     *
     * @param engine the engine of the hold
     * @param key the lock
     * @param token the releasing hold's token
     * @param turn how long a streak keeps a lock another client wants
     * @return the hand-off (maybe none) and the turn
     */
    Turn turnAt(Object engine, LockKey key, String token, Duration turn) {
        Line line = lines.get(new LineKey(engine, key));
        if (line == null || closed) {
            return new Turn(null, false);
        }
        line.lock.lock();
        try {
            if (!token.equals(line.heldBy)) {
                return new Turn(null, false);
            }
            boolean withinTurn = line.inStreak && System.nanoTime() - line.streakSince < turn.toNanos();
            Ticket head = line.queue.peekFirst();
            if (head == null || !head.waitingForTurn() || head.handing || head.handed) {
                return new Turn(null, withinTurn);
            }
            head.handing = true;
            return new Turn(new HandOver(head, head.attempt), withinTurn);
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * The release of this client's hold {@code token} yielded the lock to another client: the streak
     * ends, and the head of the line (if any) does not ask for {@code holdBack}. Call before
     * {@link #ended}.
     *
     * @param engine the engine of the hold
     * @param key the lock
     * @param token the released hold's token
     * @param holdBack how long the line holds back
     */
    void holdBack(Object engine, LockKey key, String token, Duration holdBack) {
        Line line = lines.get(new LineKey(engine, key));
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            if (token.equals(line.heldBy)) {
                line.inStreak = false;
                line.holdingBack = true;
                line.holdBackUntil = System.nanoTime() + holdBack.toNanos();
            }
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * Ends a hand-off begun with {@link #handOverFrom}: a head handed the lock is woken to take
     * it, and the line waits for its hold.
     *
     * @param handOver the hand-off
     * @param handed whether the engine granted the lock to the head
     * @param fencingToken the head's fencing token when handed
     * @param sentNanos when the request that handed it over was sent
     * @return false when the lock was handed to a head that left the line meanwhile: the caller
     *     releases that hold
     */
    boolean handOverEnded(HandOver handOver, boolean handed, long fencingToken, long sentNanos) {
        Ticket head = handOver.ticket;
        Line line = head.line;
        line.lock.lock();
        try {
            head.handing = false;
            head.wake();
            if (!handed) {
                return true;
            }
            if (!head.inLine) {
                return false;
            }
            head.handed = true;
            head.asked = true;
            head.handedFence = fencingToken;
            head.handedSentNanos = sentNanos;
            line.heldBy(head.attempt.token());
            line.handOffs++;
            return true;
        } finally {
            line.lock.unlock();
        }
    }

    /** What a release handed to a waiting attempt: its fencing token, and when the request was sent. */
    record Handed(long fencingToken, long sentNanos) {}

    /** Wakes every waiter; they return to the core's loop, which finds the client closed. */
    void close() {
        closed = true;
        for (Line line : lines.values()) {
            line.lock.lock();
            try {
                line.queue.forEach(Ticket::wake);
            } finally {
                line.lock.unlock();
            }
        }
    }

    /** @return how many lines exist (tests: lines do not outlive their waiters and holds) */
    int size() {
        return lines.size();
    }

    /** One attempt's place in its line; used by one thread at a time (the one running the attempt's step). */
    final class Ticket {
        private final LineKey lineKey;
        private final Line line;
        private final Condition turn;
        private final Acquisition attempt;
        private boolean inLine = true;
        private volatile boolean asked;
        /** The callback of an async waiter ({@link #onTurn}), or null; guarded by the line's lock. */
        private Runnable onTurn;
        /** Asleep on its turn in {@link #await}; guarded by the line's lock. */
        private boolean sleeping;
        /** A release is handing the lock to this attempt; guarded by the line's lock. */
        private boolean handing;
        /** A release handed the lock to this attempt, not taken yet; guarded by the line's lock. */
        private boolean handed;

        private long handedFence;
        private long handedSentNanos;
        private final Duration firstBackoff;
        private final Duration maxBackoff;
        /** The head's backoff since its last restart, or null; used by the attempt's thread only. */
        private Backoff backoff;
        /** The fencing token of the holder elsewhere that this head was last refused by, or -1. */
        private long lastFence = -1;

        private Ticket(LineKey lineKey, Line line, Acquisition attempt, Duration firstBackoff, Duration maxBackoff) {
            this.lineKey = lineKey;
            this.line = line;
            this.attempt = attempt;
            this.turn = line.lock.newCondition();
            this.firstBackoff = firstBackoff;
            this.maxBackoff = maxBackoff;
        }

        /**
         * Takes the lock a release handed to this attempt, first waiting out a hand-off under way
         * (bounded by the engine's request timeout). Call {@link #granted} after.
         *
         * @return the hand-off, or null when nothing was handed
         */
        Handed takeHanded() {
            line.lock.lock();
            try {
                while (handing) {
                    turn.awaitUninterruptibly();
                }
                if (!handed) {
                    return null;
                }
                handed = false;
                return new Handed(handedFence, handedSentNanos);
            } finally {
                line.lock.unlock();
            }
        }

        /**
         * @return whether this attempt may ask the engine now: it is the head and no hold of this
         *     client is known on the lock (the client is closed: yes, so the loop ends)
         */
        boolean mayAsk() {
            line.lock.lock();
            try {
                boolean may = closed || (!handing && !handed && isHeadAndFree() && line.holdingBackFor() == 0);
                asked |= may;
                if (!may) {
                    // waiting in line, not refused by a hold elsewhere: the backoff starts again after
                    backoff = null;
                }
                return may;
            } finally {
                line.lock.unlock();
            }
        }

        /**
         * The engine answered busy to this head. A holder that is a live hold of this client goes
         * into the line's {@code heldBy}: the head waits for its end in line. Any other ends this
         * client's streak, and the head pauses: as the answer says, or by the engine's backoff, never past the answer's
         * bound.
         *
         * @param busy the answer
         * @return how long to pause before asking again, in nanoseconds; -1 to wait in line instead
         */
        long afterBusy(AcquireResult.Busy busy) {
            String holder = busy.holder();
            line.lock.lock();
            try {
                if (holder != null && inLine && liveFor.applyAsLong(holder) > 0) {
                    line.heldBy(holder);
                    return -1;
                }
                line.inStreak = false;
            } finally {
                line.lock.unlock();
            }
            long pause = busy.retryWithin().toNanos();
            if (firstBackoff.isZero()) {
                return pause;
            }
            if (holder != null && busy.holderFence() >= 0) {
                if (lastFence >= 0 && busy.holderFence() != lastFence) {
                    // the lock changes hands elsewhere: be there soon when it is released for all
                    backoff = null;
                }
                lastFence = busy.holderFence();
            }
            if (backoff == null) {
                backoff = new Backoff(firstBackoff, maxBackoff);
            }
            return Math.min(pause, backoff.next().toNanos());
        }

        /** @return whether this attempt ever asked the engine (so may hold the lock unknown to it) */
        boolean asked() {
            return asked;
        }

        /**
         * Waits until this attempt may ask, or {@code nanos} (capped at {@link #RECHECK_NANOS})
         * passed.
         *
         * @param nanos the longest to wait
         * @throws InterruptedException if interrupted while waiting
         */
        void await(long nanos) throws InterruptedException {
            line.lock.lock();
            try {
                long wait = turnWait(nanos);
                if (wait <= 0) {
                    return;
                }
                sleeping = true;
                try {
                    turn.awaitNanos(wait);
                } finally {
                    sleeping = false;
                }
            } finally {
                line.lock.unlock();
            }
        }

        /**
         * @return how long this attempt waits for its turn now, at most {@code nanos} (capped at
         *     {@link #RECHECK_NANOS}); 0 or less when it need not wait; caller holds the line's lock
         */
        private long turnWait(long nanos) {
            if (closed || handing || handed) {
                return 0;
            }
            long wait = Math.min(nanos, RECHECK_NANOS);
            if (isHeadAndFree()) {
                long holdingBack = line.holdingBackFor();
                return holdingBack == 0 ? 0 : Math.min(wait, holdingBack);
            }
            if (line.heldBy != null && line.queue.peekFirst() == this) {
                // a hold whose lease may run out unrenewed: look again when it does
                return Math.min(wait, liveFor.applyAsLong(line.heldBy));
            }
            return wait;
        }

        /**
         * The callback form of {@link #await}, for a waiter that holds no thread: registers
         * {@code wake}, called once (on the thread that changes the line, under its lock: it must
         * only hand the work on) when this attempt may ask or should look again.
         *
         * @param wake what to call
         * @param nanos the longest to wait
         * @return 0 when the attempt need not wait (nothing registered); else how long to wait at
         *     most (the caller's timer), {@code wake} registered until then or {@link #stopWaiting}
         */
        long onTurn(Runnable wake, long nanos) {
            line.lock.lock();
            try {
                long wait = turnWait(nanos);
                if (wait <= 0) {
                    return 0;
                }
                onTurn = wake;
                return wait;
            } finally {
                line.lock.unlock();
            }
        }

        /** Drops a callback registered by {@link #onTurn}, if it was not called. */
        void stopWaiting() {
            line.lock.lock();
            try {
                onTurn = null;
            } finally {
                line.lock.unlock();
            }
        }

        /** @return whether this attempt waits for its turn, blocking or not; caller holds the line's lock */
        private boolean waitingForTurn() {
            return sleeping || onTurn != null;
        }

        /** Wakes this attempt, blocking or not; caller holds the line's lock. */
        private void wake() {
            turn.signal();
            Runnable callback = onTurn;
            if (callback != null) {
                onTurn = null;
                callback.run();
            }
        }

        /** Caller holds the line's lock; clears a {@code heldBy} whose hold is no longer live here. */
        private boolean isHeadAndFree() {
            if (line.queue.peekFirst() != this) {
                return false;
            }
            if (line.heldBy != null && liveFor.applyAsLong(line.heldBy) <= 0) {
                line.heldBy = null;
            }
            return line.heldBy == null;
        }

        /**
         * This attempt took the lock: it leaves the line, which now waits for its hold. Nobody
         * is woken; the next head sleeps until the hold ends.
         *
         * @param token the attempt's token
         */
        void granted(String token) {
            leave(token);
        }

        /** This attempt gives up: it leaves the line, and if it was the head the next one asks. */
        void leave() {
            leave(null);
        }

        private void leave(String heldBy) {
            lines.computeIfPresent(lineKey, (k, current) -> {
                if (current != line) {
                    return current;
                }
                line.lock.lock();
                try {
                    if (!inLine) {
                        return line;
                    }
                    inLine = false;
                    boolean wasHead = line.queue.peekFirst() == this;
                    line.queue.remove(this);
                    if (heldBy == null && handed) {
                        // handed the lock but gave up before taking it: the core abandons the hold
                        handed = false;
                        if (attempt.token().equals(line.heldBy)) {
                            line.heldBy = null;
                        }
                    }
                    if (heldBy != null && !heldBy.equals(line.heldBy)) {
                        // taken by asking the engine (a handed hold is the line's heldBy already)
                        line.heldBy(heldBy);
                        line.handOffs = 0;
                    }
                    if (line.queue.isEmpty()) {
                        return line.heldBy == null ? null : line;
                    }
                    if (wasHead && heldBy == null) {
                        line.queue.peekFirst().wake();
                    }
                    return line;
                } finally {
                    line.lock.unlock();
                }
            });
        }
    }
}
