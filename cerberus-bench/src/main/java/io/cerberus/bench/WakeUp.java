package io.cerberus.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The wake-up workload: how long a waiting client waits once the holder released, when the two are different
 * clients. Per distributed lock peer (the group's {@link EngineGroup#sharedPeers}: the floors cannot wait), two
 * instances are built, as two processes would have them, so that the release travels through the server. A round:
 * client A locks the name; a waiter thread on client B asks for it and blocks; once B's thread is seen stopped
 * (waiting, or after {@link #SEEN_WAITING_WITHIN} for a peer that waits running) and {@link #SETTLE} more, A
 * releases; the sample is from just before A's {@code unlock()} to the return of B's {@code lock()}; B releases
 * before the next round. Every round of a peer uses the same name: a name in use, as an application's recurring
 * resource is, whose per-name state (subscriptions, parent nodes) the warm-up created, so that no peer is charged
 * for a first use that a real hand-off does not pay. One waiter: {@code --threads} is not used.
 */
final class WakeUp {
    /**
     * How long B waits after its thread was seen stopped, before A releases: a thread's state says it stopped, not
     * where; on a loopback server B's first attempt and its subscription (or watch) are done well within it. Being
     * fixed, it puts every release at the same phase of a polling peer's tries: one that polls every P shows about
     * P minus this, where a release at a random moment would wait P/2 on average (docs/PERFORMANCE.md says so).
     */
    static final Duration SETTLE = Duration.ofMillis(20);
    /**
     * How long to look for B's thread waiting before settling anyway: a peer that retries at once (ShedLock's, in the
     * bench) or waits in a socket read shows its thread running while it waits.
     */
    static final Duration SEEN_WAITING_WITHIN = Duration.ofMillis(200);
    /** The longest a release may take to reach the waiter before the peer is declared failed. */
    static final Duration MOST_WAKE_UP = Duration.ofSeconds(60);

    private WakeUp() {}

    /**
     * Runs the workload for every distributed lock peer of the group, one after the other, each warmed up for
     * {@code warmup} and measured for {@code seconds} (at least one round each).
     *
     * @return a result per peer: its rounds as cycles, its wake-up latencies as the percentiles, server requests per round
     * @throws IllegalStateException if a peer's waiter failed or was not woken within {@link #MOST_WAKE_UP}
     */
    static List<Bench.Result> run(EngineGroup group, Duration seconds, Duration warmup) throws InterruptedException {
        List<Bench.Result> results = new ArrayList<>();
        int cell = 0;
        for (Map.Entry<String, PeerSpec> entry : group.sharedPeers().entrySet()) {
            Bench.Result result =
                    measure(group, entry.getValue(), seconds, warmup, "wake-" + group.engine() + "-" + cell++);
            results.add(result);
            System.err.printf(
                    Locale.ROOT,
                    "%-8s %-12s %-34s %,6d rounds  wake-up p50 %,10.1f µs  p99 %,10.1f µs%n",
                    group.engine(),
                    Bench.WAKE_UP,
                    result.peer(),
                    result.cycles(),
                    result.p50() / 1000.0,
                    result.p99() / 1000.0);
        }
        return results;
    }

    private static Bench.Result measure(
            EngineGroup group, PeerSpec spec, Duration seconds, Duration warmup, String name)
            throws InterruptedException {
        try (Peer holder = spec.build();
                Peer other = spec.build();
                Waiter waiter = new Waiter(other, name)) {
            rounds(holder, waiter, name + "-warm", warmup);
            long before = group.requests() == null ? 0 : group.requests().getAsLong();
            long begin = System.nanoTime();
            long[] samples = rounds(holder, waiter, name, seconds);
            double elapsed = (System.nanoTime() - begin) / 1e9;
            double requests = group.requests() == null
                    ? Double.NaN
                    : (double) (group.requests().getAsLong() - before) / samples.length;
            Arrays.sort(samples);
            return new Bench.Result(
                    group.engine(),
                    Bench.WAKE_UP,
                    holder.name(),
                    1,
                    samples.length,
                    elapsed,
                    percentile(samples, 0.50),
                    percentile(samples, 0.99),
                    percentile(samples, 0.999),
                    samples[samples.length - 1],
                    Double.NaN,
                    requests,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    Bench.NO_ROUNDS);
        }
    }

    /** @return the wake-up latencies, in nanoseconds, of the rounds run for {@code duration} (at least one) */
    private static long[] rounds(Peer holder, Waiter waiter, String name, Duration duration)
            throws InterruptedException {
        long[] samples = new long[64];
        int count = 0;
        long deadline = System.nanoTime() + duration.toNanos();
        do {
            Peer.Held held = holder.lock(name);
            waiter.ask(name);
            waiter.awaitStopped();
            Thread.sleep(SETTLE.toMillis());
            long released = System.nanoTime();
            held.unlock();
            long granted = waiter.granted(holder.name());
            if (count == samples.length) {
                samples = Arrays.copyOf(samples, count * 2);
            }
            samples[count++] = granted - released;
        } while (System.nanoTime() - deadline < 0);
        return Arrays.copyOf(samples, count);
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /**
     * Client B's waiter: one thread that, asked for a name, locks it, notes when the lock returned, releases it and
     * answers with that time (a thread-bound lock is released by the thread that took it).
     */
    private static final class Waiter implements AutoCloseable {
        private static final String STOP = "";
        private final SynchronousQueue<String> asks = new SynchronousQueue<>();
        private final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
        private final Thread thread;
        /** Set by the thread once it took an ask and is about to lock: its next stop is inside {@code lock()}. */
        private volatile boolean locking;

        Waiter(Peer peer, String name) {
            thread = new Thread(
                    () -> {
                        try {
                            for (String ask = asks.take(); !ask.equals(STOP); ask = asks.take()) {
                                locking = true;
                                Peer.Held held = peer.lock(ask);
                                long granted = System.nanoTime();
                                locking = false;
                                held.unlock();
                                answers.add(granted);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (RuntimeException e) {
                            answers.add(e);
                        }
                    },
                    name + "-waiter");
            thread.setDaemon(true);
            thread.start();
        }

        void ask(String name) throws InterruptedException {
            asks.put(name);
        }

        /** Returns once the thread is stopped inside {@code lock()}, or {@link #SEEN_WAITING_WITHIN} after the ask. */
        void awaitStopped() {
            long giveUpAt = System.nanoTime() + SEEN_WAITING_WITHIN.toNanos();
            while (System.nanoTime() - giveUpAt < 0) {
                Thread.State state = thread.getState();
                if (locking && (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)) {
                    return;
                }
                LockSupport.parkNanos(50_000);
            }
        }

        /**
         * @return when the thread's {@code lock()} returned, once it released
         * @throws IllegalStateException if the lock failed, or did not return within {@link #MOST_WAKE_UP}
         */
        long granted(String peer) throws InterruptedException {
            Object answer = answers.poll(MOST_WAKE_UP.toMillis(), TimeUnit.MILLISECONDS);
            if (answer == null) {
                throw new IllegalStateException(peer + ": the waiter was not granted the lock within "
                        + MOST_WAKE_UP.toSeconds() + " s of the release");
            }
            if (answer instanceof RuntimeException e) {
                throw new IllegalStateException(peer + ": the waiter's lock failed", e);
            }
            return (Long) answer;
        }

        @Override
        public void close() {
            if (!asks.offer(STOP)) {
                // a waiter still blocked (the holder's failure ended the round): stop it
                thread.interrupt();
            }
            try {
                thread.join(MOST_WAKE_UP.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
