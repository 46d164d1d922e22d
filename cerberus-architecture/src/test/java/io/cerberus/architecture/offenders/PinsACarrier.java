package io.cerberus.architecture.offenders;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Waits that hold a monitor, one of each kind the monitor rule refuses. */
public final class PinsACarrier {
    private final Object guard = new Object();
    private final CompletableFuture<String> answer = new CompletableFuture<>();

    /** Sleeps in a synchronized method. */
    public synchronized void sleepsHoldingItself() throws InterruptedException {
        Thread.sleep(1);
    }

    /** Waits for a future in a block, after a branch that returned early. */
    public String waitsAfterAnEarlyReturn(boolean early) throws InterruptedException, ExecutionException {
        synchronized (guard) {
            if (early) {
                return "early";
            }
            return answer.get();
        }
    }

    /** Waits on a monitor. */
    public void waitsOnAMonitor() throws InterruptedException {
        synchronized (guard) {
            guard.wait(1);
        }
    }

    /** Waits outside any monitor: allowed. */
    public String waitsHoldingNothing() throws InterruptedException, ExecutionException {
        synchronized (guard) {
            guard.notifyAll();
        }
        return answer.get();
    }
}
