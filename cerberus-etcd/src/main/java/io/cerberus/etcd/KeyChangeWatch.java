package io.cerberus.etcd;

import io.cerberus.spi.NotifiesChanges;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * {@link KeyWatch} with a callback instead of a waiting thread, for async waiters
 * ({@link NotifiesChanges}): calls its wake-up once when the key waited on is deleted, or when it
 * is found no longer as read, or when the watch ends; then, or when cancelled, closes the watch.
 *
 * <p>As in {@link KeyWatch}, the watch starts at the server's revision and the key is looked at
 * once the watch is in place (its created notice), and also after {@link KeyWatch#NOTICE_WITHIN}
 * without the notice; the looks are asynchronous requests ({@code stillAsRead}), answered on
 * jetcd's threads. The wake-up runs on a jetcd thread, or on the scheduler's for the look without
 * the notice, or on the caller's when the watch cannot be placed.
 */
final class KeyChangeWatch implements NotifiesChanges.ChangeWatch {
    private final AtomicReference<Runnable> wake;
    /** Told once when this watch ends (called or cancelled): the engine forgets it. */
    private final Consumer<KeyChangeWatch> ended;

    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set once {@link #place} is done, whether the watch could be placed or not. */
    private volatile boolean placed;

    private volatile Watch.Watcher watcher;
    private volatile Future<?> lookWithoutNotice;

    private KeyChangeWatch(Runnable wake, Consumer<KeyChangeWatch> ended) {
        this.wake = new AtomicReference<>(wake);
        this.ended = ended;
    }

    /**
     * Watches a key for its delete.
     *
     * @param stillAsRead given the revision the watch started from ({@link Long#MAX_VALUE} when not
     *     known), completes with whether the key is still as the caller read it
     * @param timer runs the look at the key when no created notice came
     * @param wake what to call once
     * @param ended told when the watch ends either way
     * @return the watch, for the core to cancel
     */
    static KeyChangeWatch start(
            Watch watches,
            ByteSequence key,
            LongFunction<CompletionStage<Boolean>> stillAsRead,
            ScheduledExecutorService timer,
            Runnable wake,
            Consumer<KeyChangeWatch> ended) {
        KeyChangeWatch watch = new KeyChangeWatch(wake, ended);
        watch.place(watches, key, stillAsRead, timer);
        return watch;
    }

    private void place(
            Watch watches,
            ByteSequence key,
            LongFunction<CompletionStage<Boolean>> stillAsRead,
            ScheduledExecutorService timer) {
        WatchOption option =
                WatchOption.builder().withCreateNotify(true).withNoPut(true).build();
        try {
            watcher = watches.watch(
                    key, option, Watch.listener(reply -> heard(reply, stillAsRead), failure -> call(), this::call));
            lookWithoutNotice = timer.schedule(
                    () -> look(stillAsRead, Long.MAX_VALUE), KeyWatch.NOTICE_WITHIN.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            // a closed client or engine: the attempt asks again and learns why
            call();
        }
        placed = true;
        if (wake.get() == null) {
            close(); // ended while the watch was being placed
        }
    }

    private void heard(WatchResponse reply, LongFunction<CompletionStage<Boolean>> stillAsRead) {
        for (WatchEvent event : reply.getEvents()) {
            if (event.getEventType() == WatchEvent.EventType.DELETE) {
                call();
                return;
            }
        }
        if (reply.isCreatedNotify()) {
            Future<?> timed = lookWithoutNotice;
            if (timed != null) {
                timed.cancel(false);
            }
            look(stillAsRead, reply.getHeader().getRevision());
        }
    }

    private void look(LongFunction<CompletionStage<Boolean>> stillAsRead, long watchedFrom) {
        if (wake.get() == null) {
            return;
        }
        try {
            stillAsRead.apply(watchedFrom).whenComplete((still, failure) -> {
                if (failure != null || !still) {
                    call();
                }
            });
        } catch (RuntimeException e) {
            call(); // the look could not be sent (a closed client): the attempt asks again and learns why
        }
    }

    /** Calls the wake-up if no one did or cancelled it yet, then ends the watch. */
    private void call() {
        Runnable taken = wake.getAndSet(null);
        if (taken != null) {
            taken.run();
            close();
        }
    }

    @Override
    public void cancel() {
        if (wake.getAndSet(null) != null) {
            close();
        }
    }

    /** Closes the watch and the timer, once {@link #place} is done (which calls it again). */
    private void close() {
        if (!placed || !closed.compareAndSet(false, true)) {
            return;
        }
        Watch.Watcher placedWatcher = watcher;
        if (placedWatcher != null) {
            placedWatcher.close();
        }
        Future<?> timed = lookWithoutNotice;
        if (timed != null) {
            timed.cancel(false);
        }
        ended.accept(this);
    }
}
