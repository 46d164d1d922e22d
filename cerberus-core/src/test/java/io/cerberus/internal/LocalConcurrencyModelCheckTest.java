package io.cerberus.internal;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jetbrains.lincheck.Lincheck;
import org.jetbrains.lincheck.LincheckSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client's waiting line, its hand-off and its reentrancy count, model-checked: Lincheck runs
 * each scenario's threads under its own scheduler and explores their interleavings (a thread
 * switch at every shared read and write, lock, park and wake-up), instead of hoping that a stress
 * run meets the bad one.
 *
 * <p>What runs is the real {@link LocalLines} over the real {@code mem:} store (through
 * {@code scripted:}, the same store with the two abilities that switch the line and the hand-off
 * on). A small harness takes the steps {@link Acquirer#acquire} and
 * {@link LiveHolds#releaseInEngine} take around them, in the same order: enter the line, take a
 * handed hold, ask only in turn, mark the line after a busy answer, sleep on the turn, leave on
 * grant or give-up; on release, offer the hand-off to a sleeping head, end it, forget the hold. The
 * whole client is not built inside the model checker: its lease renewer thread and its service
 * loading make every invocation far too slow to explore, and nothing of them takes part in these
 * interleavings.
 *
 * <p>Each scenario asserts what must hold in every interleaving: at most one thread inside the
 * critical section; a thread's reentrant count right through nested acquire and release; every
 * patient waiter served; and afterwards the lock free in the engine and no line left behind (a
 * hold handed to a waiter that gave up meanwhile must be given back, not stranded). See
 * docs/dev/MODEL-CHECKING.md for what was found, how a bug put back fails, and run times.
 */
class LocalConcurrencyModelCheckTest {
    /** Interleavings explored per scenario; bounded so the class runs in seconds. */
    private static final int INVOCATIONS = Integer.getInteger("cerberus.modelcheck.invocations", 20);

    private static final LockKey KEY = new LockKey("modelcheck", "order:42");
    /** Lines whose head waits as each busy answer says, the default of an engine that lines up. */
    private static final LinesUpLocally POLICY = new LinesUpLocally() {};

    /** One client's line and holds, over one engine: the parts of a client these scenarios exercise. */
    private static final class Client {
        final ScriptedEngineProvider.Scripted engine;
        /** This client's holds not yet released, by token, as {@link LiveHolds} keeps them. */
        final Map<String, Acquisition> live = new ConcurrentHashMap<>();

        final LocalLines lines = new LocalLines(token -> live.containsKey(token) ? Long.MAX_VALUE : 0);
        /** Threads inside the critical section, and those that went through it. */
        final AtomicInteger inside = new AtomicInteger();

        final AtomicInteger served = new AtomicInteger();
        /** Thread-bound reentrancy: hold and count per thread, as {@link CerberusClient} keeps them. */
        final Map<Thread, Acquisition> threadHolds = new ConcurrentHashMap<>();

        final Map<Thread, Integer> holdCounts = new ConcurrentHashMap<>();

        Client(String store, boolean handsOver) {
            engine = (ScriptedEngineProvider.Scripted) new ScriptedEngineProvider()
                    .open(new EngineContext("scripted:" + store, Duration.ofSeconds(1), (token, reason) -> {}));
            engine.linesUp = true;
            engine.handsOver = handsOver;
        }

        /**
         * The exclusive acquire loop of {@link Acquirer} for an engine that lines waiters up.
         *
         * @param rounds how many times the attempt may ask or sleep before it gives up; 0 for no end
         * @return the hold, or null when it gave up
         */
        Acquisition acquire(String token, int rounds) throws InterruptedException {
            return acquire(token, rounds, false);
        }

        /**
         * As {@link #acquire(String, int)}; with {@code async}, the waiter waits for its turn as
         * {@link AsyncAcquisition} does: a callback registered on the ticket ({@code onTurn}) wakes
         * it (here, unparks it), bounded by its timer, and it withdraws the callback after.
         */
        Acquisition acquire(String token, int rounds, boolean async) throws InterruptedException {
            Acquisition attempt = new Acquisition(KEY, LockMode.EXCLUSIVE, token, token, Duration.ofMinutes(10));
            LocalLines.Ticket ticket = lines.enter(engine, attempt, POLICY);
            boolean done = false;
            try {
                for (int round = 1; rounds == 0 || round <= rounds; round++) {
                    LocalLines.Handed handed = ticket.takeHanded();
                    if (handed != null) {
                        done = true;
                        return hold(attempt, ticket);
                    }
                    if (!ticket.mayAsk()) {
                        if (!async) {
                            ticket.await(LocalLines.RECHECK_NANOS);
                            continue;
                        }
                        Thread waiter = Thread.currentThread();
                        long wait = ticket.onTurn(() -> LockSupport.unpark(waiter), LocalLines.RECHECK_NANOS);
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                            ticket.stopWaiting();
                        }
                        continue;
                    }
                    AcquireResult result = engine.tryAcquire(attempt);
                    if (result instanceof AcquireResult.Granted) {
                        done = true;
                        return hold(attempt, ticket);
                    }
                    long wait = ticket.afterBusy((AcquireResult.Busy) result);
                    if (wait >= 0) {
                        engine.awaitChange(attempt, Duration.ofNanos(Math.max(wait, 1_000_000L)));
                    }
                }
                return null;
            } finally {
                if (!done) {
                    ticket.leave();
                    if (ticket.asked()) {
                        engine.abandon(attempt);
                    }
                }
            }
        }

        private Acquisition hold(Acquisition attempt, LocalLines.Ticket ticket) {
            live.put(attempt.token(), attempt);
            ticket.granted(attempt.token());
            return attempt;
        }

        /** The release of {@link Holding#release} through {@link LiveHolds#releaseInEngine}, hand-off included. */
        void release(Acquisition holder) {
            try {
                LocalLines.HandOver handOver =
                        engine.handsOver ? lines.handOverFrom(engine, KEY, holder.token()) : null;
                if (handOver == null) {
                    engine.release(holder);
                    return;
                }
                HandOff done = null;
                try {
                    done = engine.handOver(holder, handOver.next());
                } finally {
                    boolean handed = done != null && done.handed();
                    if (!lines.handOverEnded(handOver, handed, handed ? done.fencingToken() : -1, System.nanoTime())) {
                        engine.abandon(handOver.next());
                    }
                }
            } finally {
                live.remove(holder.token());
                lines.ended(engine, KEY, holder.token());
            }
        }

        /** {@code lock()} of the thread-bound facade: a reentry only counts, a first lock acquires. */
        void lock(String token) throws InterruptedException {
            Thread thread = Thread.currentThread();
            if (threadHolds.containsKey(thread)) {
                holdCounts.merge(thread, 1, Integer::sum);
                return;
            }
            threadHolds.put(thread, acquire(token, 0));
            holdCounts.put(thread, 1);
        }

        /** {@code unlock()}: the last one releases. */
        void unlock() {
            Thread thread = Thread.currentThread();
            int left = holdCounts.merge(thread, -1, Integer::sum);
            if (left == 0) {
                holdCounts.remove(thread);
                release(threadHolds.remove(thread));
            }
        }

        void criticalSection() {
            int now = inside.incrementAndGet();
            check(now == 1, now + " threads inside the critical section at once");
            inside.decrementAndGet();
            served.incrementAndGet();
        }

        /** Locks, locks again, works, unlocks twice, checking the count on the way out. */
        void reentrantCriticalSection(String token) {
            try {
                lock(token);
                lock(token);
                criticalSection();
                unlock();
                check(threadHolds.containsKey(Thread.currentThread()), "the hold is gone after one of two unlocks");
                unlock();
                check(!threadHolds.containsKey(Thread.currentThread()), "the hold is kept after both unlocks");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }

        /** Waits for its turn by callback, as an async acquisition does, works, releases. */
        void asyncCriticalSection(String token) {
            try {
                Acquisition hold = acquire(token, 0, true);
                criticalSection();
                release(hold);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }

        /** Tries a few rounds, works if it got the lock, releases; a waiter that gives up. */
        void impatientCriticalSection(String token, int rounds) {
            try {
                Acquisition hold = acquire(token, rounds);
                if (hold != null) {
                    criticalSection();
                    release(hold);
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }

        /**
         * After every thread finished: the lock is free in the engine and the client keeps no line.
         * Whatever the check finds is cleared from the store, which outlives the invocation.
         */
        void checkLeftNothingBehind(String... tokens) {
            boolean locked = engine.isLocked(KEY);
            for (String token : tokens) {
                engine.abandon(new Acquisition(KEY, LockMode.EXCLUSIVE, token, token, Duration.ofMinutes(10)));
            }
            check(!locked, "the lock is still held in the engine after every thread released or gave up");
            check(lines.size() == 0, lines.size() + " line(s) left after every thread released or gave up");
            check(live.isEmpty(), "holds left live: " + live.keySet());
        }
    }

    private static void check(boolean holds, String otherwise) {
        if (!holds) {
            throw new AssertionError(otherwise);
        }
    }

    private static void runThreads(Runnable... bodies) {
        Thread[] threads = new Thread[bodies.length];
        for (int i = 0; i < bodies.length; i++) {
            threads[i] = new Thread(bodies[i]);
            threads[i].start();
        }
        try {
            for (Thread thread : threads) {
                thread.join();
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Lincheck installs its agent and instruments the classes a scenario touches when it first
     * meets them, inside the invocation, which counts against its 30 s invocation timeout: all of
     * it at once in the first invocation of a scenario can take longer on a loaded machine, and
     * fail as "hung" for a reason that is not a finding. So it is paid here, in steps that each
     * stay well within the timeout, and each asserts what one thread alone must see.
     */
    @BeforeAll
    static void instrumentTheCodeUnderTest() {
        // the scenarios' stores made here, outside the model checker: made inside it, a store is
        // an insertion into the JVM-wide map of stores, and one that resizes that map (as other
        // test classes fill it) is judged a livelock, which is no finding
        for (String store : List.of(
                "modelcheck-warmup",
                "modelcheck-lined",
                "modelcheck-handoff",
                "modelcheck-giveup",
                "modelcheck-async")) {
            new Client(store, true);
        }
        modelCheck(1, () -> {});
        modelCheck(1, () -> new Client("modelcheck-warmup", true).checkLeftNothingBehind());
        modelCheck(1, () -> {
            Client client = new Client("modelcheck-warmup", true);
            client.reentrantCriticalSection("t1");
            client.checkLeftNothingBehind("t1");
        });
        modelCheck(1, () -> {
            Client client = new Client("modelcheck-warmup", true);
            runThreads(() -> client.reentrantCriticalSection("t1"));
            check(client.served.get() == 1, "the only thread was not served");
            client.checkLeftNothingBehind("t1");
        });
    }

    /**
     * Runs {@code scenario} under the model checker, {@code invocations} interleavings, stepping
     * through this project's code only: the JDK's collections and locks are taken as atomic steps
     * (their wait and wake-up still switch threads), which keeps an invocation short. Lincheck 3.7
     * takes these settings only through this entry point, Kotlin-internal (hence the mangled name);
     * {@code Lincheck.runConcurrentTest} is the same with the default settings.
     */
    private static void modelCheck(int invocations, Runnable scenario) {
        LincheckSettings defaults = LincheckSettings.Companion.getDEFAULT();
        LincheckSettings ownCodeOnly = new LincheckSettings(
                false,
                defaults.getLoopIterationsBeforeThreadSwitch(),
                defaults.getLoopBound(),
                defaults.getRecursionBound());
        Lincheck.runConcurrentTestInternal$lincheck(invocations, ownCodeOnly, scenario);
    }

    @Test
    void reentrantHoldsInLineExcludeEachOtherAndEveryWaiterIsServed() {
        modelCheck(INVOCATIONS, () -> {
            Client client = new Client("modelcheck-lined", false);
            runThreads(() -> client.reentrantCriticalSection("t1"), () -> client.reentrantCriticalSection("t2"));
            check(client.served.get() == 2, client.served.get() + " of 2 threads served");
            client.checkLeftNothingBehind("t1", "t2");
        });
    }

    @Test
    void theHandOffGivesTheLockToOneWaiterAtATime() {
        modelCheck(INVOCATIONS, () -> {
            Client client = new Client("modelcheck-handoff", true);
            runThreads(() -> client.reentrantCriticalSection("t1"), () -> client.reentrantCriticalSection("t2"));
            check(client.served.get() == 2, client.served.get() + " of 2 threads served");
            client.checkLeftNothingBehind("t1", "t2");
        });
    }

    @Test
    void aLockHandedToAWaiterThatGaveUpIsGivenBack() {
        modelCheck(INVOCATIONS, () -> {
            Client client = new Client("modelcheck-giveup", true);
            runThreads(() -> client.reentrantCriticalSection("t1"), () -> client.impatientCriticalSection("t2", 2));
            check(client.served.get() >= 1, "the patient thread was not served");
            client.checkLeftNothingBehind("t1", "t2");
        });
    }

    @Test
    void anAsyncWaiterBesideABlockingOneIsHandedTheLockAndServed() {
        modelCheck(INVOCATIONS, () -> {
            Client client = new Client("modelcheck-async", true);
            runThreads(() -> client.reentrantCriticalSection("t1"), () -> client.asyncCriticalSection("t2"));
            check(client.served.get() == 2, client.served.get() + " of 2 threads served");
            client.checkLeftNothingBehind("t1", "t2");
        });
    }
}
