package io.cerberus.redis;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockMode;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The waiting attempts of one engine and the pub/sub subscriptions that wake them: one
 * connection, one subscription per lock channel while at least one local attempt waits on it.
 *
 * <p>A release publishes the queued waiters that may be granted now (see {@code release.lua}). A
 * message wakes those of them that wait here, and one waiting {@link LockMode#EXCLUSIVE} attempt
 * (exclusive attempts do not queue; they take their chance), never the whole herd. A waiter woken
 * for nothing, or one whose wake-up was lost (a reconnect), still tries again within its retry
 * bound, so a lost message delays, never blocks.
 *
 * <p>The lost-wake-up race: an attempt learns that the lock is busy, then subscribes; a release
 * published in between would be missed. So {@link #join} is given the subscription as it was
 * before the acquire script was sent ({@link #coverage}); if the channel was not already
 * subscribed then, the new waiter starts woken, and its first wait returns at once for one more
 * try. Waiters that join an existing subscription, and every later wait, cost nothing extra.
 *
 * <p>Messages arrive on a Lettuce I/O thread, which only takes {@link #lock} briefly; no thread
 * waits for a reply while holding it. Subscribe and unsubscribe commands are issued under the lock,
 * so they reach the server in the order of the state changes.
 */
final class LockWaiters implements AutoCloseable {
    private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
    private final ReentrantLock connectLock = new ReentrantLock();
    private volatile StatefulRedisPubSubConnection<String, String> connection;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Channel> channels = new HashMap<>();
    private final Map<String, Waiter> waiters = new HashMap<>();
    private boolean closed;

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

        Waiter(Acquisition attempt, Channel channel, Condition changed) {
            this.attempt = attempt;
            this.channel = channel;
            this.changed = changed;
        }

        void wake() {
            woken = true;
            changed.signal();
        }
    }

    /** @param connector opens the pub/sub connection, on first need; throws if it cannot */
    LockWaiters(Supplier<StatefulRedisPubSubConnection<String, String>> connector) {
        this.connector = connector;
    }

    /**
     * @param channel a lock's channel
     * @return a mark of the channel's subscription as it is now, for {@link #join}
     */
    Object coverage(String channel) {
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
     * @param coverage what {@link #coverage} said before the acquire script was sent
     * @return the subscription to wait for: complete once the channel is subscribed
     */
    CompletableFuture<Void> join(Acquisition attempt, String channel, Object coverage) {
        return join(attempt, channel, coverage, false);
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

    private CompletableFuture<Void> join(Acquisition attempt, String channel, Object coverage, boolean quiet) {
        StatefulRedisPubSubConnection<String, String> pubSub = connection();
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
                subscription.subscribed = pubSub.async().subscribe(channel).toCompletableFuture();
                channels.put(channel, subscription);
            }
            waiter = new Waiter(attempt, subscription, lock.newCondition());
            waiter.woken = !quiet && subscription != coverage;
            subscription.waiters.add(waiter);
            waiters.put(attempt.token(), waiter);
            return subscription.subscribed;
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
                subscription.waiters.stream().filter(other -> !other.woken).findFirst().ifPresent(Waiter::wake);
            }
            if (subscription.waiters.isEmpty()) {
                channels.remove(subscription.name);
                StatefulRedisPubSubConnection<String, String> pubSub = connection;
                if (pubSub != null && pubSub.isOpen()) {
                    pubSub.async().unsubscribe(subscription.name);
                }
            }
        } finally {
            lock.unlock();
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
            grantable.retainAll(waiters.keySet());
            boolean exclusiveWoken = false;
            for (Waiter waiter : subscription.waiters) {
                if (grantable.contains(waiter.attempt.token())) {
                    waiter.wake();
                } else if (!exclusiveWoken && !waiter.woken && waiter.attempt.mode() == LockMode.EXCLUSIVE) {
                    waiter.wake();
                    exclusiveWoken = true;
                }
            }
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

    private StatefulRedisPubSubConnection<String, String> connection() {
        StatefulRedisPubSubConnection<String, String> open = connection;
        if (open != null) {
            return open;
        }
        connectLock.lock();
        try {
            if (connection == null) {
                StatefulRedisPubSubConnection<String, String> created = connector.get();
                created.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String payload) {
                        LockWaiters.this.message(channel, payload);
                    }
                });
                connection = created;
            }
            return connection;
        } finally {
            connectLock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            waiters.values().forEach(Waiter::wake);
            waiters.clear();
            channels.clear();
        } finally {
            lock.unlock();
        }
        StatefulRedisPubSubConnection<String, String> pubSub = connection;
        if (pubSub != null) {
            pubSub.close();
        }
    }
}
