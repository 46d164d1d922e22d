package io.cerberus.etcd;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The executor jetcd is given: a task runs at once on the thread that hands it over. jetcd passes
 * every request through its executor before sending it, and delivers watch events through it; with
 * its own pool each request woke a pool thread only to start the call (a thread hand-off per
 * request, two per lock cycle). Here the caller starts the call, and a watch event is handled on
 * the thread that read it. Every task this engine gives jetcd is short and never blocks: sending a
 * request, counting a latch down.
 */
final class CallerRuns extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable task) {
        if (shutdown) {
            throw new RejectedExecutionException("the etcd client is closed");
        }
        task.run();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }
}
