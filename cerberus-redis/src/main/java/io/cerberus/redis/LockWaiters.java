package io.cerberus.redis;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.support.Backoff;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The waiting attempts of one engine and the pub/sub subscriptions that wake them, for every Redis
 * engine: one pub/sub connection (one server, Sentinel, Cluster) or one per node (Redlock), and one
 * subscription per lock channel while at least one local attempt waits on it.
 *
 * <p><b>Wake-ups.</b> A release publishes the queued waiters that may be granted now (named in the
 * message, see {@code release.lua}); a message wakes those of them that wait here, and one waiting
 * {@link LockMode#EXCLUSIVE} attempt when none is woken yet (exclusive attempts do not queue; the
 * core lines up one client's exclusive waiters, so there is one per lock and client). Never the
 * whole herd: on Redlock a release publishes on every node, N messages, and still wakes one. A
 * waiter woken for nothing, or whose message was lost (a reconnect, a node down), tries again
 * within its retry bound, so a lost message delays, never blocks.
 *
 * <p><b>The lost-wake-up race.</b> An attempt learns that the lock is busy, then subscribes; a
 * release published in between would be missed. So {@link #join} is given the subscription as it
 * was before the acquire was sent ({@link #confirmedSubscription}); if the channel was not subscribed and
 * confirmed then, the new waiter starts woken, and its first wait returns at once for one more try.
 * A connection that opens later (a Redlock node back) subscribes every channel waited on and wakes
 * one waiter of each. A Redlock split vote backs off ({@link #nextWait}) and hears no message meanwhile.
 *
 * <p>Messages arrive on Lettuce I/O threads, which take {@link #lock} only briefly; no thread waits
 * for a reply while holding it. Subscribe and unsubscribe commands are issued under the lock, so
 * they reach each server in the order of the state changes. An async waiter's callback ({@link #onChange})
 * stands for its thread: called once, after the lock is let go, it uses the wake-up as {@link #await} does.
 */
final class LockWaiters implements AutoCloseable {
    /** The first back-off after an attempt that won some nodes but no majority. */
    static final Duration FIRST_BACKOFF = Duration.ofMillis(10);
    /** The ceiling of that backoff; in practice the remaining leases bound it first. */
    private static final Duration MAX_SPLIT_BACKOFF = Duration.ofMinutes(10);

    private final List<? extends PubSubSource> sources;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Channel> channels = new HashMap<>();
    private final Map<String, Waiter> waiters = new HashMap<>();
    /** Callbacks of waiters woken under {@link #lock}, called once it is let go ({@link #unlockAndCall}). */
    private final List<Runnable> due = new ArrayList<>();

    private final RedisPubSubAdapter<String, String> listener = new RedisPubSubAdapter<>() {
        @Override
        public void message(String channel, String payload) {
            LockWaiters.this.message(channel, payload);
        }
    };
    private boolean closed;

    /** Where pub/sub connections come from: one server, or one Redlock node. */
    interface PubSubSource {
        /**
         * Opens the connection if there is none and tells {@code onOpen} of it once it is open (now,
         * or later in the background).
         *
         * @param onOpen told once of each new connection
         * @throws RuntimeException if a source that opens at once cannot
         */
        void ensurePubSub(Consumer<StatefulRedisPubSubConnection<String, String>> onOpen);

        /** @return the open connection, or null */
        StatefulRedisPubSubConnection<String, String> pubSubOrNull();
    }

    /** One server's connection, opened at the first need by the caller's thread (which learns why it could not). */
    private static final class Connecting implements PubSubSource {
        private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
        private final ReentrantLock connectLock = new ReentrantLock();
        private volatile StatefulRedisPubSubConnection<String, String> connection;

        Connecting(Supplier<StatefulRedisPubSubConnection<String, String>> connector) {
            this.connector = connector;
        }

        @Override
        public void ensurePubSub(Consumer<StatefulRedisPubSubConnection<String, String>> onOpen) {
            if (connection != null) {
                return;
            }
            connectLock.lock();
            try {
                if (connection == null) {
                    StatefulRedisPubSubConnection<String, String> created = connector.get();
                    onOpen.accept(created);
                    connection = created;
                }
            } finally {
                connectLock.unlock();
            }
        }

        @Override
        public StatefulRedisPubSubConnection<String, String> pubSubOrNull() {
            return connection;
        }
    }

    private static final class Channel {
        final String name;
        final Set<Waiter> waiters = new LinkedHashSet<>();
        CompletableFuture<Void> subscribed;

        Channel(String name) {
            this.name = name;
        }

        boolean confirmed() {
            return subscribed.isDone() && !subscribed.isCompletedExceptionally();
        }
    }

    private static final class Waiter {
        final Acquisition attempt;
        final Channel channel;
        final Condition changed;
        boolean woken;
        /** The backoff of attempts in a row that won some nodes but no majority, or null. */
        Backoff splits;
        /** Until then, messages do not wake this waiter: it backs off (System.nanoTime()). */
        long deafUntilNanos = System.nanoTime();
        /** What its next wake-up calls, when it waits without a thread ({@link #onChange}), or null. */
        Runnable callback;

        Waiter(Acquisition attempt, Channel channel, Condition changed) {
            this.attempt = attempt;
            this.channel = channel;
            this.changed = changed;
        }

        /** Wakes the waiting thread, or hands the callback to {@code due}: a wake-up it uses at once. */
        void wake(List<Runnable> due) {
            if (callback != null) {
                due.add(callback);
                callback = null;
                return;
            }
            woken = true;
            changed.signal();
        }
    }

    private LockWaiters(List<? extends PubSubSource> sources) {
        this.sources = sources;
    }

    /**
     * @param connector opens the server's pub/sub connection, on first need; throws if it cannot
     * @return the waiters of an engine on one server (or Sentinel-managed primary, or Cluster)
     */
    static LockWaiters ofOneServer(Supplier<StatefulRedisPubSubConnection<String, String>> connector) {
        return new LockWaiters(List.of(new Connecting(connector)));
    }

    /**
     * @param nodes the Redlock engine's nodes, which open their pub/sub connections in the background
     * @return the waiters of a Redlock engine
     */
    static LockWaiters ofNodes(List<? extends PubSubSource> nodes) {
        return new LockWaiters(List.copyOf(nodes));
    }

    /**
     * @param channel a lock's channel
     * @return a mark of the channel's subscription as it is now, for {@link #join}
     */
    Object confirmedSubscription(String channel) {
        lock.lock();
        try {
            Channel subscribed = channels.get(channel);
            return subscribed != null && subscribed.confirmed() ? subscribed : null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Registers a busy attempt as a waiter of its lock's channel, subscribing if it is the first.
     * Does nothing for an attempt already waiting.
     *
     * @param attempt the attempt told busy
     * @param channel its lock's channel
     * @param subscribedBefore what {@link #confirmedSubscription} said before the acquire was sent
     * @return completes when every open connection confirmed the subscription (exceptionally if
     *     one failed: the retry bound covers that server)
     */
    CompletableFuture<Void> join(Acquisition attempt, String channel, Object subscribedBefore) {
        return join(attempt, channel, subscribedBefore, false);
    }

    /**
     * Registers a waiter that starts not woken, for callers that read the state they wait on only
     * after the subscription is confirmed (so no message can fall between the read and the wait).
     *
     * @param attempt the waiter (its token identifies it)
     * @param channel the channel to be woken by
     * @return the subscription to wait for before reading the state
     */
    CompletableFuture<Void> listen(Acquisition attempt, String channel) {
        return join(attempt, channel, null, true);
    }

    private CompletableFuture<Void> join(Acquisition attempt, String channel, Object subscribedBefore, boolean quiet) {
        for (PubSubSource source : sources) {
            source.ensurePubSub(this::opened);
        }
        lock.lock();
        try {
            if (closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("the engine is closed"));
            }
            Waiter waiter = waiters.get(attempt.token());
            if (waiter != null) {
                return waiter.channel.subscribed;
            }
            Channel subscription = channels.get(channel);
            if (subscription == null) {
                subscription = new Channel(channel);
                List<CompletableFuture<Void>> confirmations = new ArrayList<>();
                for (PubSubSource source : sources) {
                    StatefulRedisPubSubConnection<String, String> pubSub = source.pubSubOrNull();
                    if (pubSub != null && pubSub.isOpen()) {
                        confirmations.add(pubSub.async().subscribe(channel).toCompletableFuture());
                    }
                }
                subscription.subscribed = CompletableFuture.allOf(confirmations.toArray(new CompletableFuture<?>[0]));
                channels.put(channel, subscription);
            }
            waiter = new Waiter(attempt, subscription, lock.newCondition());
            waiter.woken = !quiet && subscription != subscribedBefore;
            subscription.waiters.add(waiter);
            waiters.put(attempt.token(), waiter);
            return subscription.subscribed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A pub/sub connection opened: listen, and subscribe to every channel waited on now. A release
     * may have passed unseen before, so once subscribed each channel wakes one waiter.
     */
    private void opened(StatefulRedisPubSubConnection<String, String> pubSub) {
        pubSub.addListener(listener);
        lock.lock();
        try {
            if (!channels.isEmpty()) {
                String[] waitedOn = channels.keySet().toArray(new String[0]);
                pubSub.async().subscribe(waitedOn).thenRun(() -> {
                    for (String channel : waitedOn) {
                        message(channel, "");
                    }
                });
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Decides how long a waiting attempt waits before its next try. An attempt that won no node
     * waits for a release message, at most {@code untilFree}. One that won some nodes but no
     * majority (a split vote among competitors, or a holder that has the lock on fewer than all
     * nodes) has released them, which publishes; it backs off for a random time that doubles with
     * each such attempt in a row, from {@link #FIRST_BACKOFF} up to {@code untilFree}, and hears no
     * message meanwhile, so it is not woken by its own release, and competitors spread out.
     *
     * @param attempt a waiting attempt ({@link #join} was called)
     * @param split whether it won some nodes but no majority
     * @param untilFree when the lock may be free, by the remaining leases seen
     * @return how long to wait at most
     */
    Duration nextWait(Acquisition attempt, boolean split, Duration untilFree) {
        lock.lock();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter == null || !split) {
                if (waiter != null) {
                    waiter.splits = null;
                    waiter.deafUntilNanos = System.nanoTime();
                }
                return untilFree;
            }
            if (waiter.splits == null) {
                waiter.splits = new Backoff(FIRST_BACKOFF, MAX_SPLIT_BACKOFF);
            }
            Duration backoff = waiter.splits.next(untilFree);
            waiter.woken = false;
            waiter.deafUntilNanos = System.nanoTime() + backoff.toNanos();
            return backoff;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the attempt is woken or {@code max} passed. Returns at once for an attempt that
     * is not waiting, or that was woken since its last wait.
     *
     * @param attempt the attempt
     * @param max the longest to wait
     * @throws InterruptedException if interrupted
     */
    void await(Acquisition attempt, Duration max) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter == null) {
                return;
            }
            long nanos = max.toNanos();
            while (!waiter.woken && !closed && nanos > 0) {
                nanos = waiter.changed.awaitNanos(nanos);
            }
            waiter.woken = false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Calls {@code wake} once at the attempt's next wake-up, instead of waking a thread in
     * {@link #await}; at once for an attempt that is not waiting, or that was woken since its last
     * wait. Replaces a callback the attempt registered before.
     *
     * @param attempt the attempt
     * @param wake what to call; it must return at once
     * @return removes the callback if it was not called yet
     */
    NotifiesChanges.ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        lock.lock();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter != null && !waiter.woken && !closed) {
                waiter.callback = wake;
                return () -> forget(waiter, wake);
            }
            if (waiter != null) {
                waiter.woken = false;
            }
        } finally {
            lock.unlock();
        }
        wake.run();
        return () -> {};
    }

    private void forget(Waiter waiter, Runnable wake) {
        lock.lock();
        try {
            if (waiter.callback == wake) {
                waiter.callback = null;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes a waiter: granted, or given up. A waiter that gives up with a wake-up it did not use
     * passes it on, so a release is not lost on a leaving attempt. The channel is unsubscribed when
     * its last waiter leaves.
     *
     * @param token the attempt's token
     * @param granted whether it leaves because it got the lock
     */
    void leave(String token, boolean granted) {
        lock.lock();
        try {
            Waiter waiter = waiters.remove(token);
            if (waiter == null) {
                return;
            }
            Channel subscription = waiter.channel;
            subscription.waiters.remove(waiter);
            if (waiter.woken && !granted) {
                subscription.waiters.stream()
                        .filter(other -> !other.woken)
                        .findFirst()
                        .ifPresent(other -> other.wake(due));
            }
            if (subscription.waiters.isEmpty()) {
                channels.remove(subscription.name);
                for (PubSubSource source : sources) {
                    StatefulRedisPubSubConnection<String, String> pubSub = source.pubSubOrNull();
                    if (pubSub != null && pubSub.isOpen()) {
                        pubSub.async().unsubscribe(subscription.name);
                    }
                }
            }
        } finally {
            unlockAndCall();
        }
    }

    private void message(String channel, String payload) {
        lock.lock();
        try {
            Channel subscription = channels.get(channel);
            if (subscription == null) {
                return;
            }
            Set<String> grantable = new HashSet<>();
            for (String member : payload.isEmpty() ? new String[0] : payload.split(" ")) {
                grantable.add(member.substring(1));
            }
            boolean exclusiveWoken = false;
            Waiter nextExclusive = null;
            long now = System.nanoTime();
            for (Waiter waiter : subscription.waiters) {
                if (grantable.contains(waiter.attempt.token())) {
                    waiter.wake(due);
                } else if (waiter.attempt.mode() == LockMode.EXCLUSIVE) {
                    exclusiveWoken |= waiter.woken;
                    if (nextExclusive == null && !waiter.woken && now - waiter.deafUntilNanos >= 0) {
                        nextExclusive = waiter;
                    }
                }
            }
            if (!exclusiveWoken && nextExclusive != null) {
                nextExclusive.wake(due);
            }
        } finally {
            unlockAndCall();
        }
    }

    /** Lets {@link #lock} go, then calls the callbacks of the waiters woken under it. */
    private void unlockAndCall() {
        if (due.isEmpty()) {
            lock.unlock();
            return;
        }
        List<Runnable> calls = List.copyOf(due);
        due.clear();
        lock.unlock();
        calls.forEach(Runnable::run);
    }

    /** @return how many waiters wait with a callback now (for tests) */
    int callbacks() {
        lock.lock();
        try {
            return (int) waiters.values().stream()
                    .filter(waiter -> waiter.callback != null)
                    .count();
        } finally {
            lock.unlock();
        }
    }

    /** @return how many channels are subscribed now (for tests) */
    int subscriptions() {
        lock.lock();
        try {
            return channels.size();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter and forgets them; closes a connection this object opened (a Redlock node closes its own). */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            waiters.values().forEach(waiter -> waiter.wake(due));
            waiters.clear();
            channels.clear();
        } finally {
            unlockAndCall();
        }
        for (PubSubSource source : sources) {
            if (source instanceof Connecting connecting) {
                StatefulRedisPubSubConnection<String, String> pubSub = connecting.pubSubOrNull();
                if (pubSub != null) {
                    pubSub.close();
                }
            }
        }
    }
}
