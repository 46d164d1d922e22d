package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Fence;
import io.cerberus.Leadership;
import io.cerberus.LeadershipListener;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Backoff;
import io.cerberus.spi.support.FailureEpisode;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Leadership}: one participant contending for an election's lock with the async acquire
 * (no thread of its own while it waits), leading while it holds it, contending again after a loss.
 * The term is the hold's fencing token. A failure to reach the engine is retried after a pause
 * (100 ms doubling to 5 s), logged once per episode.
 *
 * <p>Invariants: at most one contention (an async acquisition) or one hold at a time; after
 * {@link #close()} neither exists (a grant that races the close is released); listeners hear the
 * events of one hold in order, each hold's {@code elected} before its {@code revoked}, on the
 * client's event thread.
 */
final class Election implements Leadership {
    private static final System.Logger LOG = System.getLogger(Election.class.getName());
    private static final Duration FIRST_RETRY = Duration.ofMillis(100);
    private static final Duration MAX_RETRY = Duration.ofSeconds(5);

    private final CerberusClient client;
    private final LockView lock;
    private final String participantId;
    private final List<LeadershipListener> listeners = new CopyOnWriteArrayList<>();
    private final FailureEpisode unreachable;

    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    /** The contention under way, or null; guarded by {@link #state}. */
    private CompletableFuture<Holding> contending;
    /** The hold while this participant leads, or null; guarded by {@link #state}, read without it. */
    private volatile Holding leading;

    private Backoff retries;
    private boolean started;
    private boolean closed;

    Election(CerberusClient client, LockView lock, String participantId) {
        this.client = client;
        this.lock = lock;
        this.participantId = participantId;
        this.unreachable = new FailureEpisode(LOG, "leadership '" + lock.name() + "' contending");
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public String participantId() {
        return participantId;
    }

    @Override
    public Leadership start() {
        state.lock();
        try {
            if (closed) {
                throw new IllegalStateException("leadership '" + name() + "' of " + participantId + " is closed");
            }
            client.ensureOpen();
            if (started) {
                return this;
            }
            started = true;
            contend();
        } finally {
            state.unlock();
        }
        return this;
    }

    @Override
    public Leadership onChange(LeadershipListener listener) {
        listeners.add(Arguments.notNull("listener", listener));
        return this;
    }

    @Override
    public boolean isLeader() {
        Holding hold = leading;
        return hold != null && hold.isValid();
    }

    @Override
    public long term() {
        Holding hold = leading;
        if (hold == null) {
            throw new IllegalStateException(participantId + " does not lead '" + name() + "' now");
        }
        return hold.fencingToken();
    }

    @Override
    public Fence fence() {
        Holding hold = leading;
        if (hold == null) {
            throw new IllegalStateException(participantId + " does not lead '" + name() + "' now");
        }
        return hold.fence();
    }

    @Override
    public boolean awaitLeadership(Duration max) throws InterruptedException {
        long left = Checks.nanos(Checks.waitTime(max));
        state.lock();
        try {
            while (!isLeader()) {
                if (left <= 0 || closed) {
                    return false;
                }
                // a hold in doubt signals nothing when vouched for again: look again within a second
                long wait = Math.min(left, TimeUnit.SECONDS.toNanos(1));
                left -= wait - changed.awaitNanos(wait);
            }
            return true;
        } finally {
            state.unlock();
        }
    }

    @Override
    public Optional<String> currentLeader() {
        return client.inspect(name()).stream()
                .filter(info -> info.name().equals(name()))
                .map(LockInfo::holder)
                .findFirst();
    }

    @Override
    public void close() {
        CompletableFuture<Holding> waiting;
        Holding hold;
        state.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            waiting = contending;
            contending = null;
            hold = leading;
            leading = null;
            changed.signalAll();
        } finally {
            state.unlock();
        }
        if (waiting != null) {
            waiting.cancel(false); // withdrawn; a grant that races it is released
        }
        if (hold != null) {
            try {
                hold.release();
            } catch (LockLostException e) {
                LOG.log(Level.DEBUG, () -> "leadership '" + name() + "' was lost before it stepped down");
            } catch (RuntimeException e) {
                LOG.log(
                        Level.WARNING,
                        "leadership '" + name() + "' could not step down (" + e.getMessage()
                                + "); another participant is elected when its lease ends");
            }
            tell(listener -> listener.revoked(this, "stepped down (closed)"));
        }
    }

    /** Starts a contention; caller holds {@link #state}. */
    private void contend() {
        AcquireRequest request = new AcquireRequest(
                lock, client.defaultLease(), true, -1, false, false, System.nanoTime(), participantId);
        CompletableFuture<Holding> waiting = client.acquirer.acquireAsync(request, hold -> hold);
        contending = waiting;
        waiting.whenComplete((hold, failure) -> ended(waiting, hold, failure));
    }

    /** A contention ended: elected, or failed (tried again after a pause). */
    private void ended(CompletableFuture<Holding> waiting, Holding hold, Throwable failure) {
        state.lock();
        try {
            if (contending != waiting || closed) {
                return; // cancelled by close(); a grant was released by the acquisition
            }
            contending = null;
            if (hold != null) {
                unreachable.succeeded();
                retries = null;
                leading = hold;
                changed.signalAll();
            } else {
                retryLater(failure);
                return;
            }
        } finally {
            state.unlock();
        }
        hold.watchDoubts(uncertain -> {
            if (leading == hold) {
                tell(listener -> {
                    if (uncertain) {
                        listener.uncertain(this);
                    } else {
                        listener.confirmed(this);
                    }
                });
            }
        });
        long term = hold.engine.has(Capability.FENCING) ? hold.fencingToken() : -1;
        tell(listener -> listener.elected(this, term));
        hold.onLost((lease, reason) -> lost(hold, reason));
    }

    /** The leading hold was lost: revoked, and contend again. */
    private void lost(Holding hold, LockLostException reason) {
        state.lock();
        try {
            if (leading != hold) {
                return;
            }
            leading = null;
            changed.signalAll();
            if (!closed) {
                contend();
            }
        } finally {
            state.unlock();
        }
        // on the event thread already (a loss listener): told in order after this hold's elected
        for (LeadershipListener listener : listeners) {
            call(() -> listener.revoked(this, "lost: " + reason.getMessage()));
        }
    }

    /** Contends again after a pause; caller holds {@link #state}. */
    private void retryLater(Throwable failure) {
        if (retries == null) {
            retries = new Backoff(FIRST_RETRY, MAX_RETRY);
        }
        Duration pause = retries.next();
        if (failure instanceof EngineUnavailableException unavailable) {
            unreachable.failed(
                    () -> "leadership '" + name() + "' could not reach its engine; contending again in "
                            + pause.toMillis() + " ms",
                    unavailable);
        } else if (failure != null && !(failure instanceof IllegalStateException)) {
            LOG.log(Level.WARNING, "leadership '" + name() + "' could not contend; trying again", failure);
        }
        if (failure instanceof IllegalStateException) {
            return; // the client is closed
        }
        client.acquirer.async.schedule(
                () -> {
                    state.lock();
                    try {
                        if (!closed && contending == null && leading == null) {
                            contend();
                        }
                    } catch (IllegalStateException clientClosed) {
                        LOG.log(Level.DEBUG, () -> "leadership '" + name() + "' ends with its client");
                    } finally {
                        state.unlock();
                    }
                },
                pause.toNanos());
    }

    private void tell(java.util.function.Consumer<LeadershipListener> event) {
        client.events().run("a leadership listener of '" + name() + "'", () -> {
            for (LeadershipListener listener : listeners) {
                call(() -> event.accept(listener));
            }
        });
    }

    private void call(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | Error e) {
            LOG.log(Level.ERROR, "a leadership listener of '" + name() + "' threw", e);
        }
    }

    @Override
    public String toString() {
        return "leadership '" + name() + "' of " + participantId + (isLeader() ? " (leader)" : "");
    }
}
