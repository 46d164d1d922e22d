package io.cerberus.redis;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.support.Durations;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Waits for replies, bounded by the command timeout, and turns failures into
 * {@link EngineUnavailableException}s that say what was attempted, on which server, and how long
 * it waited. Waits are not interruptible (a reply may be a grant that must not be dropped); an
 * interrupt is kept for the caller.
 */
final class Replies {
    private Replies() {}

    /**
     * @param stage the pending reply
     * @param timeout the longest to wait
     * @param uri the redacted engine URI
     * @param what what was attempted, for the message ("acquire lock 'x'")
     * @param <T> the reply type
     * @return the reply
     * @throws EngineUnavailableException if the reply fails or does not come in time
     */
    static <T> T await(CompletionStage<T> stage, Duration timeout, String uri, String what) {
        return await(stage, timeout, uri, () -> what);
    }

    /**
     * {@link #await(CompletionStage, Duration, String, String)} with the description made only
     * when it is needed for an error: for the calls made on every acquisition and release.
     */
    static <T> T await(CompletionStage<T> stage, Duration timeout, String uri, Supplier<String> what) {
        Future<T> future = stage.toCompletableFuture();
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    future.cancel(false);
                    throw new EngineUnavailableException(
                            "redis engine " + uri + " did not answer within " + Durations.format(timeout) + " to "
                                    + what.get() + "; check that the server runs and is not overloaded",
                            e);
                } catch (ExecutionException | CompletionException | CancellationException e) {
                    throw failure(e.getCause() == null ? e : e.getCause(), uri, what.get());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @param failure a failure of {@link #await}
     * @return whether the command was refused because the connection is down (being re-established)
     */
    static boolean disconnected(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisConnectionException
                    || t instanceof RedisException
                            && String.valueOf(t.getMessage()).contains("not connected")) {
                return true;
            }
        }
        return false;
    }

    static EngineUnavailableException failure(Throwable cause, String uri, String what) {
        if (cause instanceof EngineUnavailableException known) {
            return known;
        }
        if (cause instanceof RedisCommandExecutionException) {
            return new EngineUnavailableException(
                    "redis engine " + uri + " refused to " + what + ": " + cause.getMessage(), cause);
        }
        return new EngineUnavailableException(
                "could not " + what + " on redis engine " + uri + ": " + cause.getMessage()
                        + "; check that the server runs and is reachable",
                cause);
    }
}
