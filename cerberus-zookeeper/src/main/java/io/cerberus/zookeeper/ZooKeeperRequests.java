package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import io.cerberus.internal.Checks;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Sends the engine's requests to the ensemble, each bounded by the connect timeout, and turns
 * failures into {@link EngineUnavailableException} naming the URI. Shared by the locks and the
 * idempotency records. Thread-safe.
 */
final class ZooKeeperRequests {
    private final String shown;
    /** How long one request may take. */
    private final Duration timeout;

    /** Starts a request in the background. */
    @FunctionalInterface
    interface Request {
        void start(BackgroundCallback callback) throws Exception;
    }

    ZooKeeperRequests(String shown, Duration timeout) {
        this.shown = shown;
        this.timeout = timeout;
    }

    /** @return the engine's URI without its password */
    String shown() {
        return shown;
    }

    /**
     * Sends a request and waits for its answer, at most the engine's timeout, without being
     * interrupted: a request cut off half way could leave a node whose owner does not know it.
     * An interrupt is kept for the caller.
     */
    CuratorEvent send(String what, Request request) {
        return send(() -> what, request);
    }

    /** As {@link #send(String, Request)}; {@code what} is said only in an error, so it is made only then. */
    CuratorEvent send(Supplier<String> what, Request request) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            request.start((c, event) -> answer.complete(event));
        } catch (Exception e) {
            throw failure(what.get(), e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    throw new EngineUnavailableException("zookeeper engine " + shown + " did not answer within "
                            + Checks.format(timeout) + " to " + what.get()
                            + "; check that a quorum of the ensemble runs and is reachable", e);
                } catch (ExecutionException e) {
                    throw failure(what.get(), e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Throws unless the request succeeded. */
    void check(CuratorEvent event, String what) {
        check(event, () -> what);
    }

    /** As {@link #check(CuratorEvent, String)}, making {@code what} only for the error. */
    void check(CuratorEvent event, Supplier<String> what) {
        int code = event.getResultCode();
        if (code != KeeperException.Code.OK.intValue()) {
            throw failure(what.get(), KeeperException.create(KeeperException.Code.get(code), event.getPath()));
        }
    }

    /** @return whether the request failed with this code */
    static boolean failedWith(CuratorEvent event, KeeperException.Code code) {
        return event.getResultCode() == code.intValue();
    }

    RuntimeException failure(String what, Throwable e) {
        if (e instanceof RuntimeException runtime && !(e instanceof IllegalStateException)) {
            return runtime;
        }
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (e instanceof KeeperException.NoAuthException) {
            return new EngineUnavailableException("zookeeper engine " + shown + " refused to " + what
                    + ": not authorised (check the user and password of the URI, and the ACL of the namespace's node)", e);
        }
        return new EngineUnavailableException("zookeeper engine " + shown + " could not " + what + ": " + e
                + "; check that a quorum of the ensemble runs and is reachable", e);
    }
}
