package io.cerberus.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongPredicate;

/**
 * Waits for a change of one key: the predecessor of a waiting lock attempt, or an idempotency
 * record in progress.
 *
 * <p>The watch starts at the server's current revision, never at an earlier one: etcd serves a
 * watch that starts in the past from its "unsynced" group, which it catches up only every 100 ms,
 * so on a busy lock most hand-offs would wait up to 100 ms for their event. What happened between
 * the caller's read and the watch is covered instead by asking, once the watch is in place, whether
 * the key is still as read: {@code stillAsRead} gets the revision the watch started from (from the
 * watch's created notice), and can answer without a request when nothing was written since the read.
 *
 * <p>jetcd now and then does not pass the created notice on (a new watch has its own stream, and a
 * reply that comes before jetcd listens to it is dropped, while later events arrive). So the key is
 * also looked at when no notice came within {@link #NOTICE_WITHIN}, with an unknown start revision
 * ({@link Long#MAX_VALUE}), and again if the notice comes later.
 */
final class KeyWatch {
    /** How long a created notice may take before the key is looked at without it. */
    static final Duration NOTICE_WITHIN = Duration.ofMillis(20);

    /** Guards the two fields below; a lock and condition, not a monitor, so a waiting virtual thread frees its carrier. */
    private final ReentrantLock lock = new ReentrantLock();

    private final Condition news = lock.newCondition();
    private long startRevision = -1;
    private boolean changed;

    private KeyWatch() {}

    /**
     * @param deletesOnly whether only a delete of the key counts as a change (else any write does)
     * @param stillAsRead asked once the watch is in place, with the revision it started from: whether
     *     the key is still as the caller read it; false ends the wait at once
     * @param max the longest wait
     */
    static void await(Watch watches, ByteSequence key, boolean deletesOnly, LongPredicate stillAsRead, Duration max)
            throws InterruptedException {
        new KeyWatch().run(watches, key, deletesOnly, stillAsRead, max);
    }

    private void run(Watch watches, ByteSequence key, boolean deletesOnly, LongPredicate stillAsRead, Duration max)
            throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        WatchOption option = WatchOption.builder()
                .withCreateNotify(true)
                .withNoPut(deletesOnly)
                .build();
        Watch.Watcher watcher = watches.watch(
                key,
                option,
                Watch.listener(
                        reply -> {
                            boolean change = false;
                            for (WatchEvent event : reply.getEvents()) {
                                change |= !deletesOnly || event.getEventType() == WatchEvent.EventType.DELETE;
                            }
                            lock.lock();
                            try {
                                if (reply.isCreatedNotify()) {
                                    startRevision = reply.getHeader().getRevision();
                                }
                                changed |= change;
                                news.signalAll();
                            } finally {
                                lock.unlock();
                            }
                        },
                        failure -> changed(),
                        this::changed));
        try {
            long noticeBy = Math.min(deadline, System.nanoTime() + NOTICE_WITHIN.toNanos());
            long placedAt = waitFor(noticeBy, true);
            if (placedAt == 0 || !stillAsRead.test(placedAt < 0 ? Long.MAX_VALUE : placedAt)) {
                return;
            }
            if (placedAt < 0) {
                // looked at without the notice; if it comes after all, look again from where the watch surely is
                placedAt = waitFor(deadline, true);
                if (placedAt <= 0 || !stillAsRead.test(placedAt)) {
                    return;
                }
            }
            waitFor(deadline, false);
        } finally {
            watcher.close();
        }
    }

    private void changed() {
        lock.lock();
        try {
            changed = true;
            news.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param orNotice whether the created notice also ends the wait
     * @return 0 when the key changed (or the watch ended), the start revision when the notice came, -1 when the time ran out
     */
    private long waitFor(long until, boolean orNotice) throws InterruptedException {
        lock.lock();
        try {
            while (true) {
                if (changed) {
                    return 0;
                }
                if (orNotice && startRevision >= 0) {
                    return startRevision;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return -1;
                }
                news.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }
}
