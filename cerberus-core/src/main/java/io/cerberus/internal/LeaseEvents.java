package io.cerberus.internal;

import io.cerberus.LeaseLossListener;
import io.cerberus.LockLostException;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Calls lease-loss listeners on one daemon thread of their own, so a slow listener never delays
 * renewals and never runs while Cerberus holds an internal lock.
 */
final class LeaseEvents implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LeaseEvents.class.getName());

    private final ThreadPoolExecutor executor;

    LeaseEvents(String clientName) {
        executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), runnable -> {
            Thread thread = new Thread(runnable, "cerberus-lease-events-" + clientName);
            thread.setDaemon(true);
            return thread;
        });
    }

    void notify(Holding lease, List<LeaseLossListener> listeners, LockLostException reason) {
        Runnable call = () -> {
            for (LeaseLossListener listener : listeners) {
                try {
                    listener.leaseLost(lease, reason);
                } catch (RuntimeException | Error e) {
                    LOG.log(Level.ERROR, "a lease-loss listener of " + lease.described() + " threw", e);
                }
            }
        };
        try {
            executor.execute(call);
        } catch (RejectedExecutionException closed) {
            LOG.log(Level.DEBUG, "client closed; lease-loss listeners of " + lease.described() + " not called");
        }
    }

    /** Runs {@code call} on the event thread, after what is already queued; dropped (and logged) after close. */
    void run(String what, Runnable call) {
        try {
            executor.execute(() -> {
                try {
                    call.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(Level.ERROR, what + " threw", e);
                }
            });
        } catch (RejectedExecutionException closed) {
            LOG.log(Level.DEBUG, "client closed; " + what + " not called");
        }
    }

    @Override
    public void close() {
        executor.shutdown();
    }
}
