package io.cerberus.spi.support;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One operation's failures, logged once per episode rather than once each: while a server refuses
 * requests, every attempt that gives up may fail the same way, and a line with a stack trace for
 * each would bury the log. The first failure of an episode is a WARNING with its exception and says
 * that more are logged at DEBUG; the next ones are DEBUG lines; the first success after them ends
 * the episode with one INFO line that counts them. Thread-safe; one instance per operation and
 * engine (or client). A success outside an episode costs one volatile read.
 */
public final class FailureEpisode {
    private final Logger log;
    private final String operation;
    private final AtomicLong failures = new AtomicLong();

    /**
     * @param log where the lines go
     * @param operation what fails, as it reads after "could not", e.g.
     *     {@code "withdraw attempts from engine 'etcd'"}
     */
    public FailureEpisode(Logger log, String operation) {
        this.log = Objects.requireNonNull(log, "log");
        this.operation = Objects.requireNonNull(operation, "operation");
    }

    /**
     * Logs one failure: a WARNING with the failure if it starts an episode, else a DEBUG line.
     *
     * @param message this failure's own words (what it was about), asked for only when logged
     * @param failure the failure
     */
    public void failed(Supplier<String> message, Throwable failure) {
        long count = failures.incrementAndGet();
        if (count == 1) {
            log.log(
                    Level.WARNING,
                    "could not " + operation + ": " + message.get()
                            + " (further failures of this kind are logged at DEBUG until one succeeds)",
                    failure);
        } else if (log.isLoggable(Level.DEBUG)) {
            log.log(
                    Level.DEBUG,
                    "could not " + operation + " (failure " + count + " in a row): " + message.get() + ": " + failure);
        }
    }

    /** The operation succeeded: an episode of failures, if one was running, ends with a line counting them. */
    public void succeeded() {
        if (failures.get() == 0) {
            return;
        }
        long count = failures.getAndSet(0);
        if (count > 0) {
            log.log(
                    Level.INFO,
                    "the failures to " + operation + " are over: it worked again after " + count
                            + (count == 1 ? " failure" : " failures in a row"));
        }
    }

    /** @return the failures of the running episode, 0 when none runs */
    public long failuresInARow() {
        return failures.get();
    }
}
