package io.cerberus.jdbc;

import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The waiting attempts of one engine, lined up per lock key, so that one of them at a time asks
 * the database and the others wait in this JVM without sending a statement.
 *
 * <p><b>Rules.</b> An attempt enters its key's line at its first try and leaves it when it is
 * granted or abandoned (timeout, interruption, failure). Only the head asks the database; the
 * others answer busy at once and wait for their turn on a condition of their own, bounded by the
 * caller's wait. A head that gives up wakes the next attempt, which asks at its next try: it does
 * not wait out a backoff. A head granted the lock marks the line with its token, and so does a
 * head told busy by the database with the token of a hold of this engine: while that hold lasts
 * (until this engine releases it, or its lease by the last answer has passed) the head does not
 * ask, since the lock is known to be taken, and only the release here wakes it (so a hand-off
 * between threads wakes one thread once). Otherwise the head
 * waits as every waiter used to: backoff with jitter (20 ms doubling to 1 s, never past the bound
 * the database gave), woken early by {@link Wakeups} (a release in this JVM, a PostgreSQL
 * notification). A release in another process is thus still seen by the head, and the late
 * notification of a release in this JVM does not make it ask while the next local holder holds.
 *
 * <p><b>Hand-off.</b> An engine may hand a lock straight to the head in the release of the hold
 * the head waits for ({@link #handOverFrom}): the database moves the hold from the releaser to the
 * head in one statement, with the next fence, and the head's next try takes it without asking.
 * The head must be asleep on its turn (so the hand-off is what wakes it), and while the hand-off
 * is under way it neither asks nor is granted otherwise; if it gave up meanwhile, the releaser
 * frees the handed hold.
 *
 * <p><b>Turns between processes.</b> A run of holds here begins with a grant and goes on through
 * hand-offs and grants right after a hold here, until a busy answer says the lock is held
 * elsewhere. A lock another process is known to wait for is handed on here for a turn of
 * {@link #TURN_MS} from the start of the run (a plain release past the turn ends it too), then
 * released for all, and the line holds back for {@link #YIELD_MS}: the head does not ask before
 * then, so the other process takes the lock for its own turn. Without the hold-back the head here,
 * woken in this JVM, would take it straight back: before the other process's notification
 * arrives (PostgreSQL), or while it sleeps in its backoff (MariaDB, no notification; there the
 * engine has a head poll at the shortest backoff for as long as it sees the lock change hands, a
 * new fence at every refusal, so that its next poll falls in the hold-back). Turns keep the
 * wake-ups of other processes to one per turn, which matters in session mode on PostgreSQL: a
 * release within the turn while a thread here waits wakes nobody elsewhere ({@link #turnGoesOn}).
 * Nothing depends on turns for safety: a poll or wake-up that comes late only leaves the lock
 * free until a head asks.
 *
 * <p><b>Why it is safe.</b> The line only decides who asks; the database alone decides who
 * holds, so a wrong guess here (two heads, a stale mark) costs a statement or a wait bounded by a
 * lease, never mutual exclusion. No waiter is stranded: every way out of the engine's loop in the
 * core ends in a grant or an abandon, both of which hand the turn on; and a head that stops
 * calling the engine altogether (an SPI caller that neither tries again nor abandons) is passed
 * over once it has been silent for {@link #STALE_HEAD_NANOS}, so the attempts behind it ask in
 * its place.
 *
 * <p><b>Modes.</b> Both jdbc engines hold every mode of a key as one exclusive lock (neither
 * claims {@code READ_WRITE}), so there is one line per key for all modes. An engine with shared
 * holds would have to let readers pass the line together.
 *
 * <p><b>Costs.</b> In this JVM, one acquire per hand-off (and one release) however many threads
 * wait for the key, instead of one per waiter at every release and every backoff; across
 * processes, one asking attempt per engine and key. The price: a {@code tryLock()} without a wait
 * behind a waiter of the same JVM answers false without asking, as the lock is contended here.
 */
final class LocalGate implements AutoCloseable {
    static final long MIN_BACKOFF_MS = 20;
    static final long MAX_BACKOFF_MS = 1000;
    /** What a queued attempt answers: the longest it waits before it looks at its place again. */
    static final Duration QUEUED_RECHECK = Duration.ofMillis(MAX_BACKOFF_MS);
    /** How long a head may be out of every engine call before the attempts behind it ask in its place. */
    static final long STALE_HEAD_NANOS = TimeUnit.SECONDS.toNanos(3);
    /**
     * How long a lock another process is known to wait for stays with this engine's threads,
     * counted from the grant that began their run of holds.
     */
    static final long TURN_MS = 100;
    /**
     * How long the line holds back after it released a lock for another process: longer than a
     * poll of a waiter that sees the lock change hands ({@link Ticket#busy}), and than a
     * notification takes.
     */
    static final long YIELD_MS = 2 * MIN_BACKOFF_MS;
    /** What the line waits for while it holds back for another process: no hold has this token. */
    private static final String YIELDED = "(yielded to another process)";
    /** The mark to pass when this engine wrote none: no mark in the database has this value. */
    static final long NO_MARK = -1;

    private final Map<String, Line> lines = new ConcurrentHashMap<>();
    /**
     * The holds granted in this engine and not released yet, by token: when the run of holds here
     * that each belongs to began. Kept here, not in the line, since a line is dropped whenever
     * nobody waits in it.
     */
    private final Map<String, Long> holds = new ConcurrentHashMap<>();
    private final long staleHeadNanos;
    /** Where processes take turns: the turn's length in ns; 0 elsewhere. */
    private final long turnNanos;
    private volatile boolean closed;

    /** A gate without turns, for an engine that hands nothing over and wakes nobody. */
    LocalGate() {
        this(STALE_HEAD_NANOS, null);
    }

    /**
     * @param staleHeadNanos how long a head may be silent before it is passed over (tests shorten it)
     * @param turn null for no turns (a lock another process waits for is not handed over).
     *     Otherwise how long such a lock stays with this engine's threads ({@link #TURN_MS} in
     *     the engines); the line then holds back for {@link #YIELD_MS} after releasing it for
     *     that process, and a head polls soon while the lock changes hands elsewhere
     */
    LocalGate(long staleHeadNanos, Duration turn) {
        this.staleHeadNanos = staleHeadNanos;
        this.turnNanos = turn == null ? 0 : turn.toNanos();
    }

    /** The attempts waiting for one key, and the hold of this engine they wait for, if known. */
    private static final class Line {
        final String key;
        final Wakeups.Interest interest;
        final ReentrantLock lock = new ReentrantLock();
        /** First come, first asked; guarded by {@link #lock}. */
        final ArrayDeque<Ticket> queue = new ArrayDeque<>();
        /**
         * The token of a hold of this engine that the line waits for (granted from this line, or
         * named by the database in a busy answer), or null.
         */
        String heldBy;
        /** When that hold's lease runs out by this JVM's clock, as last known. */
        long heldUntil;
        /** The wanted mark this engine last wrote on the key's row, or {@link #NO_MARK}. */
        long ownMark = NO_MARK;
        /** Until when (this JVM's clock) a mark of another client is known to stand, or to have stood, on the row. */
        long othersMarkUntil = System.nanoTime();
        /**
         * Whether this engine's threads have held the lock one after another since {@link #runSince}
         * (a grant while in a run continues it; a busy answer for a hold elsewhere, or holding
         * back for another process, ends it).
         */
        boolean inRun;
        long runSince;

        Line(String key) {
            this.key = key;
            this.interest = Wakeups.JVM.register(key);
        }
    }

    /**
     * Puts a new attempt at the end of its key's line.
     *
     * @param key the lock's row key
     * @param attempt the attempt, to which a release in this engine may hand the lock over
     * @return the attempt's place, to be given up with {@link Ticket#granted} or {@link Ticket#leave}
     */
    Ticket enter(String key, Acquisition attempt) {
        Ticket[] entered = new Ticket[1];
        lines.compute(key, (k, line) -> {
            Line joined = line == null ? new Line(k) : line;
            joined.lock.lock();
            try {
                entered[0] = new Ticket(joined, attempt);
                joined.queue.addLast(entered[0]);
            } finally {
                joined.lock.unlock();
            }
            return joined;
        });
        return entered[0];
    }

    /**
     * @param token an attempt's token
     * @return whether the attempt holds its lock in this engine (granted, not released)
     */
    boolean holds(String token) {
        return holds.containsKey(token);
    }

    /**
     * The database told an attempt of this engine that it marked the key's row wanted with
     * {@code mark}, in place of {@code before}. A release that finds the row marked with the
     * engine's own mark knows of no other client waiting, unless the mark replaced one of another
     * client that still stood: then another client is taken to wait for as long as that one would
     * have stood. (A line dropped when empty forgets both, so its next release takes any mark for
     * another client's.)
     *
     * @param key the lock's row key
     * @param mark the row's new {@code wanted_until}
     * @param before the row's {@code wanted_until} before
     * @param markMillis how long a mark stands: {@code mark} was written at {@code mark - markMillis}
     */
    void marked(String key, long mark, long before, long markMillis) {
        Line line = lines.get(key);
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            long stoodFor = before - (mark - markMillis);
            if (stoodFor > 0 && before != line.ownMark) {
                othersMarkStands(line, stoodFor);
            }
            line.ownMark = mark;
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * @param key the lock's row key
     * @return the wanted mark this engine last wrote on the key's row while its line stood, or {@link #NO_MARK}
     */
    long ownMark(String key) {
        Line line = lines.get(key);
        if (line == null) {
            return NO_MARK;
        }
        line.lock.lock();
        try {
            return line.ownMark;
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * A mark of another client is known to stand on the key's row for {@code millis} more (written
     * in place of the one this engine read, so its exact value is unknown).
     *
     * @param key the lock's row key
     * @param millis how long a mark stands
     */
    void othersMarked(String key, long millis) {
        Line line = lines.get(key);
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            othersMarkStands(line, millis);
        } finally {
            line.lock.unlock();
        }
    }

    /** A mark of another client stands on the line's row for {@code millis} more, if not longer; caller holds the line's lock. */
    private static void othersMarkStands(Line line, long millis) {
        long now = System.nanoTime();
        line.othersMarkUntil = Math.max(line.othersMarkUntil - now, TimeUnit.MILLISECONDS.toNanos(millis)) + now;
    }

    /**
     * A hand-off that a release in this engine may make: to the head of the key's line, asleep on
     * its turn while the line waits for the releasing hold.
     *
     * @param next the attempt that takes the lock in the release, if the database agrees
     * @param ownMark the wanted mark this engine last wrote on the row, or {@link #NO_MARK}
     * @param runSince when the run of holds here that the hand-off extends began
     * @param evenIfWanted whether the hand-off may go ahead while another process marked the row
     *     wanted: within the turn
     */
    record HandOver(Ticket next, long ownMark, long runSince, boolean evenIfWanted) {
    }

    /**
     * Starts a hand-off of the hold {@code token} of {@code key} to the head of the line, if the
     * head waits for that hold's release now. Until {@link #handOverEnded} the head neither asks
     * nor is granted otherwise.
     *
     * @param key the lock's row key
     * @param token the releasing hold's token
     * @return the hand-off to try, or null to release as usual
     */
    HandOver handOverFrom(String key, String token) {
        Line line = lines.get(key);
        if (line == null || closed) {
            return null;
        }
        line.lock.lock();
        try {
            if (!token.equals(line.heldBy)) {
                return null;
            }
            long now = System.nanoTime();
            for (Ticket ticket : line.queue) {
                if (!ticket.isStale(now)) {
                    // only a head that sleeps on its turn (or is about to) is woken by the hand-off
                    if (!ticket.awaiting || ticket.backingOff || ticket.handing || ticket.handed) {
                        return null;
                    }
                    ticket.handing = true;
                    long runSince = holds.getOrDefault(token, now);
                    long ownMark = line.othersMarkUntil - now > 0 ? NO_MARK : line.ownMark;
                    return new HandOver(ticket, ownMark, runSince, now - runSince < turnNanos);
                }
            }
            return null;
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * Ends a hand-off begun with {@link #handOverFrom}. A handed attempt is marked as holding,
     * the line as held by it, and it is woken to take its grant.
     *
     * @param handOver the hand-off
     * @param fence the new hold's fencing token, or -1 when the database did not hand the lock over
     * @param sentNanos when the statement that handed it over was first sent
     * @return false when the lock was handed over to an attempt that left the line meanwhile: the
     *     caller releases that hold
     */
    boolean handOverEnded(HandOver handOver, long fence, long sentNanos) {
        Ticket next = handOver.next;
        Line line = next.line;
        line.lock.lock();
        try {
            next.handing = false;
            next.turn.signal();
            if (fence < 0) {
                return true;
            }
            if (!next.inLine) {
                return false;
            }
            next.handed = true;
            next.handedFence = fence;
            next.handedSentNanos = sentNanos;
            next.asked = true;
            holds.put(next.attempt.token(), handOver.runSince);
            line.heldBy = next.attempt.token();
            line.heldUntil = sentNanos + next.attempt.lease().toNanos();
            return true;
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * A hold of {@code key} ended in this engine (released, abandoned, its connection lost): if it
     * is the hold the line waits for, the head asks now.
     *
     * @param key the lock's row key
     * @param token the hold's token
     */
    void released(String key, String token) {
        released(key, token, false);
    }

    /**
     * A hold of {@code key} ended in this engine; {@code forOthers}: its release did not hand the
     * lock on, or woke a waiter elsewhere, since another process waits for it. With turns the line
     * then holds back for {@link #YIELD_MS}, so that the other process takes the lock; the head
     * asks after that, or at once without turns.
     *
     * @param key the lock's row key
     * @param token the hold's token
     * @param forOthers whether the lock was released for a waiter of another process
     */
    void released(String key, String token, boolean forOthers) {
        // before the line's lock: a head that marks the line held by this token checks the set under that lock
        Long runSince = holds.remove(token);
        Line line = lines.get(key);
        if (line == null) {
            return;
        }
        line.lock.lock();
        try {
            if (token.equals(line.heldBy)) {
                long now = System.nanoTime();
                // a release that handed nothing over (the head was not asleep yet) ends the turn as well
                boolean turnOver = runSince != null && now - runSince >= turnNanos && line.othersMarkUntil - now > 0;
                if (turnNanos > 0 && (forOthers || turnOver)) {
                    line.inRun = false;
                    line.heldBy = YIELDED;
                    line.heldUntil = now + TimeUnit.MILLISECONDS.toNanos(YIELD_MS);
                } else {
                    line.heldBy = null;
                }
                signalHead(line);
            }
        } finally {
            line.lock.unlock();
        }
    }

    /**
     * @param token a hold's token
     * @return when the run of holds here that the hold belongs to began, or null when it is not held in this engine
     */
    Long runSince(String token) {
        return holds.get(token);
    }

    /**
     * Whether the release of the hold {@code token} of {@code key} should leave the lock to this
     * engine's next thread without waking other processes: processes take turns here, a thread of
     * this engine waits for the lock, and the run of holds that this one belongs to began less
     * than a turn ago.
     *
     * @param key the lock's row key
     * @param token the releasing hold's token
     * @return whether the release may skip waking other processes
     */
    boolean turnGoesOn(String key, String token) {
        Line line = lines.get(key);
        Long runSince = holds.get(token);
        if (line == null || runSince == null) {
            return false;
        }
        line.lock.lock();
        try {
            long now = System.nanoTime();
            if (!token.equals(line.heldBy) || now - runSince >= turnNanos) {
                return false;
            }
            for (Ticket ticket : line.queue) {
                if (!ticket.isStale(now)) {
                    return true;
                }
            }
            return false;
        } finally {
            line.lock.unlock();
        }
    }

    /** Wakes every waiter; they return to the core, which finds the client closed. */
    @Override
    public void close() {
        closed = true;
        for (Line line : lines.values()) {
            line.lock.lock();
            try {
                line.queue.forEach(ticket -> ticket.turn.signal());
            } finally {
                line.lock.unlock();
            }
            line.interest.close();
        }
        lines.clear();
        holds.clear();
    }

    /** Wakes the head, and any stale heads before it; caller holds the line's lock. */
    private void signalHead(Line line) {
        long now = System.nanoTime();
        for (Ticket ticket : line.queue) {
            ticket.turn.signal();
            if (!ticket.isStale(now)) {
                return;
            }
        }
    }

    /**
     * One attempt's place in its line. The calls of one attempt come one at a time (the core's
     * loop), so its own bookkeeping needs no lock; what other attempts read is volatile or guarded
     * by the line's lock.
     */
    final class Ticket {
        private final Line line;
        private final Condition turn;
        private final Acquisition attempt;
        private volatile boolean inCall;
        /** Whether the attempt waits in {@link #await}: only then may a release hand it the lock. */
        private volatile boolean awaiting;
        /**
         * Whether the attempt, in {@link #await}, backs off (waits for {@link Wakeups} rather than
         * on its turn, so a hand-off would not wake it); guarded by the line's lock.
         */
        private boolean backingOff;
        /** A release is handing the lock over to this attempt; guarded by the line's lock. */
        private boolean handing;
        /** A release handed the lock over to this attempt: the next try takes it; guarded by the line's lock. */
        private boolean handed;
        private long handedFence;
        private long handedSentNanos;
        private volatile long lastCall = System.nanoTime();
        /** Whether this attempt's last try was made as the head (asked, or held off by a mark). */
        private boolean triedAsHead;
        /** The hold this head waits for instead of asking, or null when it asked. */
        private String waitingFor;
        private long seen;
        private int busyAnswers;
        /** The fence of the hold of another client that this head was last refused by, or -1. */
        private long lastFence = -1;
        private volatile boolean asked;
        private boolean inLine = true;

        private Ticket(Line line, Acquisition attempt) {
            this.line = line;
            this.attempt = attempt;
            this.turn = line.lock.newCondition();
        }

        /** @return the attempt waiting here */
        Acquisition attempt() {
            return attempt;
        }

        /**
         * Takes the lock a release handed over to this attempt, waiting for a hand-off under way
         * (bounded by that release's statement timeout). When handed, the attempt leaves the line
         * as a granted one.
         *
         * @return the grant, with the age of the statement that made it; null when nothing was handed
         */
        AcquireResult handedGrant() {
            line.lock.lock();
            try {
                while (handing) {
                    turn.awaitUninterruptibly();
                }
                if (!handed) {
                    return null;
                }
                handed = false;
            } finally {
                line.lock.unlock();
            }
            long age = Math.max(0, System.nanoTime() - handedSentNanos);
            leave(attempt.token(), Duration.ofNanos(Math.max(0, attempt.lease().toNanos() - age)));
            return AcquireResult.granted(handedFence, age);
        }

        /** @return whether this attempt ever asked the database (so may hold the lock unknown to us) */
        boolean asked() {
            return asked;
        }

        /**
         * Starts a try: says whether this attempt may ask the database now. Call {@link #endTry()}
         * when the try is over.
         *
         * @return null if this attempt asks now; otherwise the busy answer to give without asking
         */
        AcquireResult.Busy busyUnlessTurn() {
            inCall = true;
            lastCall = System.nanoTime();
            line.lock.lock();
            try {
                if (closed || !inLine) {
                    asked = true;
                    return null;
                }
                if (!isHead()) {
                    triedAsHead = false;
                    return new AcquireResult.Busy(QUEUED_RECHECK);
                }
                if (!triedAsHead) {
                    triedAsHead = true;
                    busyAnswers = 0;
                }
                long untilFree = line.heldUntil - System.nanoTime();
                if (line.heldBy != null && untilFree > 0) {
                    waitingFor = line.heldBy;
                    return new AcquireResult.Busy(Duration.ofNanos(untilFree));
                }
                waitingFor = null;
                seen = line.interest.version();
                asked = true;
                return null;
            } finally {
                line.lock.unlock();
            }
        }

        /** @return the longest the next backoff of this head lasts, in ms: 20 doubling with every busy answer up to 1 s */
        long backoffCeilingMillis() {
            return Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS << Math.min(busyAnswers, 10));
        }

        /** Ends a try begun with {@link #busyUnlessTurn()}. */
        void endTry() {
            lastCall = System.nanoTime();
            inCall = false;
        }

        /**
         * Waits until this attempt should try again: its turn came, the hold it waits for ended,
         * the lock may have changed, or {@code max} passed.
         *
         * @param max the longest to wait
         * @throws InterruptedException if interrupted while waiting
         */
        void await(Duration max) throws InterruptedException {
            inCall = true;
            lastCall = System.nanoTime();
            awaiting = true;
            try {
                long deadline = System.nanoTime() + max.toNanos();
                if (!awaitTurn(deadline)) {
                    return;
                }
                long ceiling = backoffCeilingMillis();
                busyAnswers++;
                long backoff = TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1));
                line.interest.await(seen, Duration.ofNanos(Math.max(0, Math.min(backoff, deadline - System.nanoTime()))));
            } finally {
                line.lock.lock();
                try {
                    awaiting = false;
                    backingOff = false;
                } finally {
                    line.lock.unlock();
                }
                lastCall = System.nanoTime();
                inCall = false;
            }
        }

        /**
         * Waits in the line while this attempt should not ask.
         *
         * @return true if this attempt is a head that asked and should now back off; false if it
         *     should try again at once (its turn came, the hold it waited for ended, time is up)
         */
        private boolean awaitTurn(long deadline) throws InterruptedException {
            line.lock.lock();
            try {
                while (true) {
                    long left = deadline - System.nanoTime();
                    if (handing && left > 0 && !closed) {
                        turn.awaitNanos(left);
                        continue;
                    }
                    if (handed || closed || !inLine || left <= 0) {
                        return false;
                    }
                    if (!isHead()) {
                        // looks again at least every recheck interval, for a head gone silent
                        turn.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(MAX_BACKOFF_MS)));
                        continue;
                    }
                    if (!triedAsHead) {
                        if (line.heldBy == null || line.heldUntil - System.nanoTime() <= 0) {
                            return false;
                        }
                        // its turn came while the lock is held here: it waits for that hold's end
                        // as a head that tried would, without a round through the core
                        triedAsHead = true;
                        busyAnswers = 0;
                        waitingFor = line.heldBy;
                    }
                    if (waitingFor == null) {
                        backingOff = true;
                        return true;
                    }
                    if (!waitingFor.equals(line.heldBy)) {
                        return false;
                    }
                    long untilFree = line.heldUntil - System.nanoTime();
                    if (untilFree <= 0) {
                        return false;
                    }
                    turn.awaitNanos(Math.min(left, untilFree));
                }
            } finally {
                line.lock.unlock();
            }
        }

        /**
         * This attempt took the lock: it leaves the line, marks the line as held by it for up to
         * {@code lease}, and wakes the next attempt.
         *
         * @param token the attempt's token
         * @param lease the hold's lease
         */
        void granted(String token, Duration lease) {
            long since;
            line.lock.lock();
            try {
                if (!line.inRun) {
                    line.inRun = true;
                    line.runSince = System.nanoTime();
                }
                since = line.runSince;
            } finally {
                line.lock.unlock();
            }
            holds.put(token, since);
            leave(token, lease);
        }

        /**
         * The database answered busy to this head's ask: if the owner is a hold of this engine, the
         * head waits for its release (or {@code remaining}) instead of backing off.
         *
         * @param owner the holder's token, or null if the database did not say
         * @param remaining how long the holder's lease lasts
         */
        void busy(String owner, Duration remaining) {
            busy(owner, remaining, -1);
        }

        /**
         * As {@link #busy(String, Duration)}. With turns, a hold of another client with a fence
         * other than the one this head last saw means the lock changes hands there: the head's
         * backoff starts again from the shortest, so that it is soon there to take the lock when
         * that process releases it for it (for an engine whose waiters are not woken otherwise).
         *
         * @param fence the hold's fence as read, or -1 to leave the backoff as it is
         */
        void busy(String owner, Duration remaining, long fence) {
            if (owner == null || !holds.containsKey(owner)) {
                line.lock.lock();
                try {
                    // the lock is (or may be) held elsewhere: a grant after this begins a new run
                    line.inRun = false;
                } finally {
                    line.lock.unlock();
                }
                if (turnNanos > 0 && owner != null && fence >= 0) {
                    if (lastFence >= 0 && fence != lastFence) {
                        busyAnswers = 0;
                    }
                    lastFence = fence;
                }
                return;
            }
            line.lock.lock();
            try {
                if (!inLine || !holds.containsKey(owner)) {
                    return;
                }
                line.heldBy = owner;
                line.heldUntil = System.nanoTime() + remaining.toNanos();
                waitingFor = owner;
            } finally {
                line.lock.unlock();
            }
        }

        /** This attempt gives up: it leaves the line and the next attempt asks at once. */
        void leave() {
            leave(null, null);
        }

        private void leave(String heldBy, Duration lease) {
            boolean[] emptied = new boolean[1];
            lines.computeIfPresent(line.key, (k, current) -> {
                if (current != line) {
                    return current;
                }
                line.lock.lock();
                try {
                    if (!inLine) {
                        return line;
                    }
                    inLine = false;
                    boolean wasHead = isHead();
                    line.queue.remove(this);
                    if (heldBy != null) {
                        line.heldBy = heldBy;
                        line.heldUntil = System.nanoTime() + lease.toNanos();
                    }
                    if (line.queue.isEmpty()) {
                        emptied[0] = true;
                        return null;
                    }
                    if (wasHead && heldBy == null) {
                        // a grant wakes nobody: the next head sleeps until that hold ends here
                        // (or looks again within the recheck interval)
                        signalHead(line);
                    }
                    return line;
                } finally {
                    line.lock.unlock();
                }
            });
            if (emptied[0]) {
                line.interest.close();
            }
        }

        /** @return whether this attempt is the first in line not passed over; caller holds the line's lock */
        private boolean isHead() {
            long now = System.nanoTime();
            for (Ticket ticket : line.queue) {
                if (ticket == this) {
                    return true;
                }
                if (!ticket.isStale(now)) {
                    return false;
                }
            }
            return false;
        }

        private boolean isStale(long now) {
            return !inCall && now - lastCall > staleHeadNanos;
        }
    }
}
