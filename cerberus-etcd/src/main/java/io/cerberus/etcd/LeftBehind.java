package io.cerberus.etcd;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The keys whose delete failed (an attempt given up, a hold whose lease ran out, a grant that came
 * late), deleted again every second, on a thread of their own, until the server answers; then for a
 * while longer, by value: a create of the same attempt sent while the server did not answer may
 * still land (the client library resends it for up to its retry time), and would make the key again.
 *
 * <p>Invariants: a key stays here until deletes of it were answered for {@code settle} (the first by
 * its create revision, the later ones by the attempt's value), and only then is its number given back,
 * so a later attempt on the number never meets it; while the client lives its lease keeps such a key,
 * so without this a live client's failed delete would block the lock (and every fair waiter behind the
 * key) for the rest of the client's life. A round stops at the first failure: the server still does
 * not answer, the rest waits too.
 */
final class LeftBehind implements AutoCloseable {
    private static final Logger LOG = System.getLogger(LeftBehind.class.getName());
    private static final long RETRY_MILLIS = 1_000;

    private final ScheduledExecutorService timer;
    private final Predicate<AttemptState> delete;
    private final Consumer<AttemptState> deleted;
    private final long settleNanos;
    private final Queue<Entry> keys = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean armed = new AtomicBoolean();

    /** A key to delete, and until when it is deleted again after a first delete was answered (0: none yet). */
    private static final class Entry {
        final AttemptState state;
        long settledAt;

        Entry(AttemptState state) {
            this.state = state;
        }
    }

    /**
     * @param delete deletes a key if it is still the attempt's; throws when the server does not answer
     * @param deleted gives the number of a key that is gone back
     * @param settle how long after a first answered delete a late create may still land: the client's retry time
     */
    LeftBehind(Predicate<AttemptState> delete, Consumer<AttemptState> deleted, java.time.Duration settle) {
        this.settleNanos = settle.toNanos();
        this.delete = delete;
        this.deleted = deleted;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cerberus-etcd-left-behind");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Deletes the key again a second from now, and every second after that until it is done. */
    void add(AttemptState state) {
        keys.add(new Entry(state));
        arm();
    }

    /** @return how many keys wait for their delete */
    int size() {
        return keys.size();
    }

    private void arm() {
        if (armed.compareAndSet(false, true)) {
            try {
                timer.schedule(this::retry, RETRY_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                // the engine is closing: its lease is revoked, and the keys with it
            }
        }
    }

    private void retry() {
        armed.set(false);
        for (Iterator<Entry> each = keys.iterator(); each.hasNext(); ) {
            Entry entry = each.next();
            try {
                delete.test(entry.state);
            } catch (RuntimeException stillDown) {
                LOG.log(
                        Level.DEBUG,
                        "could not delete the key of " + entry.state.attempt + " again; next try in 1 s",
                        stillDown);
                break;
            }
            long now = System.nanoTime();
            if (entry.settledAt == 0) {
                entry.settledAt = now + settleNanos;
                entry.state.createRevision = 0; // from now on by value: a late create has a revision of its own
            } else if (now - entry.settledAt >= 0) {
                each.remove();
                deleted.accept(entry.state);
            }
        }
        if (!keys.isEmpty()) {
            arm();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
