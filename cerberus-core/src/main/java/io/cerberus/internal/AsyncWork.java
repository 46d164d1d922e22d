package io.cerberus.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one client's async calls: a pool of at most {@link #THREADS} daemon threads for
 * their steps (engine round trips, which may block for one request), and one timer thread for
 * their waits. Made at the first async call; idle threads end after {@link #IDLE_SECONDS}.
 *
 * <p>Invariant: a task handed over is run, whatever happens: after {@link #close()} (or when the
 * pool refuses it) it runs on the caller's thread, where it finds the client closed and fails its
 * future. {@link #close()} wakes every async acquisition still waiting, so none outlives its client.
 */
final class AsyncWork {
    /** Async steps of one client running at once, at most: engine round trips beyond it queue. */
    static final int THREADS = 16;

    static final int IDLE_SECONDS = 10;

    private final String clientName;
    private final Set<AsyncAcquisition<?>> waiting = ConcurrentHashMap.newKeySet();
    private volatile ThreadPoolExecutor pool;
    private volatile ScheduledThreadPoolExecutor timer;
    private volatile boolean closed;

    AsyncWork(String clientName) {
        this.clientName = clientName;
    }

    /** Runs a step on the pool (on the caller's thread after {@link #close()}). */
    void execute(Runnable step) {
        if (!closed) {
            try {
                pool().execute(step);
                return;
            } catch (RejectedExecutionException e) {
                // closed meanwhile: run it here, where it finds the client closed
            }
        }
        step.run();
    }

    /**
     * Calls {@code wake} after {@code nanos}; it must only hand work on ({@link #execute}).
     *
     * @return the timer's future, to cancel; null when {@code wake} ran at once (after close)
     */
    Future<?> schedule(Runnable wake, long nanos) {
        if (!closed) {
            try {
                return timer().schedule(wake, nanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // closed meanwhile
            }
        }
        wake.run();
        return null;
    }

    void started(AsyncAcquisition<?> acquisition) {
        waiting.add(acquisition);
        if (closed) {
            acquisition.wakeNow();
        }
    }

    void ended(AsyncAcquisition<?> acquisition) {
        waiting.remove(acquisition);
    }

    /** @return how many acquisitions started and have not ended */
    int registered() {
        return waiting.size();
    }

    /** Wakes every acquisition still waiting (each finds the client closed), then lets the threads end. */
    void close() {
        closed = true;
        waiting.forEach(AsyncAcquisition::wakeNow);
        ThreadPoolExecutor steps = pool;
        if (steps != null) {
            steps.shutdown();
        }
        ScheduledThreadPoolExecutor waits = timer;
        if (waits != null) {
            waits.shutdownNow();
        }
    }

    private ThreadPoolExecutor pool() {
        ThreadPoolExecutor steps = pool;
        if (steps == null) {
            synchronized (this) {
                steps = pool;
                if (steps == null) {
                    steps = new ThreadPoolExecutor(
                            THREADS,
                            THREADS,
                            IDLE_SECONDS,
                            TimeUnit.SECONDS,
                            new LinkedBlockingQueue<>(),
                            daemons("cerberus-async-" + clientName));
                    steps.allowCoreThreadTimeOut(true);
                    pool = steps;
                }
            }
        }
        return steps;
    }

    private ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor waits = timer;
        if (waits == null) {
            synchronized (this) {
                waits = timer;
                if (waits == null) {
                    waits = new ScheduledThreadPoolExecutor(1, daemons("cerberus-async-timer-" + clientName));
                    waits.setRemoveOnCancelPolicy(true);
                    waits.setKeepAliveTime(IDLE_SECONDS, TimeUnit.SECONDS);
                    waits.allowCoreThreadTimeOut(true);
                    timer = waits;
                }
            }
        }
        return waits;
    }

    private static ThreadFactory daemons(String name) {
        return task -> {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        };
    }
}
