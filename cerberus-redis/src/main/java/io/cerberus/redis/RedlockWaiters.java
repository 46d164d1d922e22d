package io.cerberus.redis;

import io.cerberus.spi.Acquisition;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The waiting attempts of a Redlock engine and the pub/sub subscriptions that wake them: one
 * pub/sub connection per node, one subscription per lock channel on every node while at least one
 * local attempt waits on it.
 *
 * <p>A release publishes on each node that held the lock, so one release brings up to N messages.
 * A message wakes one waiter of the channel, and only when none is woken already: the woken one
 * tries again, and if it loses the race it waits again. Nothing else wakes a waiter early; the
 * retry bound of every busy answer covers expiries (which publish nothing), lost messages and nodes
 * whose pub/sub connection is down.
 *
 * <p>The lost-wake-up race (busy, then subscribe, with a release in between) is closed as in
 * {@link LockWaiters}: {@link #join} is given the subscription as it was before the acquire was
 * sent ({@link #coverage}); a waiter that joins a channel not subscribed then starts woken, so its
 * first wait returns at once for one more try.
 *
 * <p>Messages arrive on Lettuce I/O threads, which take {@link #lock} only briefly; no thread waits
 * for a reply while holding it.
 */
final class RedlockWaiters implements AutoCloseable {
    /** The first back-off after an attempt that won some nodes but no majority. */
    static final Duration FIRST_BACKOFF = Duration.ofMillis(10);
    private final List<RedlockNode> nodes;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Channel> channels = new HashMap<>();
    private final Map<String, Waiter> waiters = new HashMap<>();
    private final RedisPubSubAdapter<String, String> listener = new RedisPubSubAdapter<>() {
        @Override
        public void message(String channel, String payload) {
            RedlockWaiters.this.message(channel);
        }
    };
    private boolean closed;

    private static final class Channel {
        final String name;
        final Set<Waiter> waiters = new LinkedHashSet<>();
        /** Completes when every node that had a pub/sub connection confirmed the subscription. */
        CompletableFuture<Void> subscribed = CompletableFuture.completedFuture(null);

        Channel(String name) {
            this.name = name;
        }

        boolean confirmed() {
            return subscribed.isDone();
        }
    }

    private static final class Waiter {
        final Channel channel;
        final Condition changed;
        boolean woken;
        /** Attempts in a row that won some nodes but no majority. */
        int splits;
        /** Until then, release messages do not wake this waiter: it backs off (System.nanoTime()). */
        long deafUntilNanos;

        Waiter(Channel channel, Condition changed) {
            this.channel = channel;
            this.changed = changed;
        }

        void wake() {
            woken = true;
            changed.signal();
        }
    }

    /** @param nodes the engine's nodes */
    RedlockWaiters(List<RedlockNode> nodes) {
        this.nodes = nodes;
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
     * Registers a busy attempt as a waiter of its lock's channel, subscribing on every node with
     * an open pub/sub connection if it is the channel's first waiter (and opening the connections
     * of nodes that have none, in the background). Does nothing for an attempt already waiting.
     *
     * @param attempt the attempt told busy
     * @param channel its lock's channel
     * @param coverage what {@link #coverage} said before the acquire was sent
     * @return completes when the nodes with a pub/sub connection confirmed the subscription
     *     (exceptionally if one failed: the retry bound covers that node)
     */
    CompletableFuture<Void> join(Acquisition attempt, String channel, Object coverage) {
        for (RedlockNode node : nodes) {
            node.ensurePubSub(this::opened);
        }
        lock.lock();
        try {
            Waiter known = waiters.get(attempt.token());
            if (closed || known != null) {
                return known == null ? CompletableFuture.completedFuture(null) : known.channel.subscribed;
            }
            Channel subscription = channels.get(channel);
            if (subscription == null) {
                subscription = new Channel(channel);
                channels.put(channel, subscription);
                List<CompletableFuture<Void>> confirmations = new ArrayList<>();
                for (RedlockNode node : nodes) {
                    StatefulRedisPubSubConnection<String, String> pubSub = node.pubSubOrNull();
                    if (pubSub != null && pubSub.isOpen()) {
                        confirmations.add(pubSub.async().subscribe(channel).toCompletableFuture());
                    }
                }
                subscription.subscribed = CompletableFuture.allOf(confirmations.toArray(new CompletableFuture<?>[0]));
            }
            Waiter waiter = new Waiter(subscription, lock.newCondition());
            // a subscription that was not in place before the acquire was sent may have missed a
            // release, so try once more
            waiter.woken = subscription != coverage;
            subscription.waiters.add(waiter);
            waiters.put(attempt.token(), waiter);
            return subscription.subscribed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A node's pub/sub connection opened: listen, and subscribe to every channel waited on now. A
     * release may have passed unseen before, so once subscribed each channel wakes one waiter.
     */
    private void opened(StatefulRedisPubSubConnection<String, String> pubSub) {
        pubSub.addListener(listener);
        lock.lock();
        try {
            if (!channels.isEmpty()) {
                String[] waitedOn = channels.keySet().toArray(new String[0]);
                pubSub.async().subscribe(waitedOn).thenRun(() -> {
                    for (String channel : waitedOn) {
                        message(channel);
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
     * release message meanwhile, so it is not woken by its own release, and competitors spread out
     * as the algorithm's author advises.
     *
     * @param attempt a waiting attempt ({@link #join} was called)
     * @param split whether it won some nodes but no majority
     * @param untilFree when a majority of nodes may be free, by the remaining leases seen
     * @return how long to wait at most
     */
    Duration nextWait(Acquisition attempt, boolean split, Duration untilFree) {
        lock.lock();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter == null || !split) {
                if (waiter != null) {
                    waiter.splits = 0;
                    waiter.deafUntilNanos = System.nanoTime();
                }
                return untilFree;
            }
            long ceiling = Math.min(untilFree.toNanos(), FIRST_BACKOFF.toNanos() << Math.min(waiter.splits, 20));
            waiter.splits++;
            long backoff = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
            waiter.woken = false;
            waiter.deafUntilNanos = System.nanoTime() + backoff;
            return Duration.ofNanos(backoff);
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
     * Removes a waiter: granted, or given up. One that gives up with an unused wake-up passes it
     * on. The channel is unsubscribed when its last waiter leaves.
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
                for (RedlockNode node : nodes) {
                    StatefulRedisPubSubConnection<String, String> pubSub = node.pubSubOrNull();
                    if (pubSub != null && pubSub.isOpen()) {
                        pubSub.async().unsubscribe(subscription.name);
                    }
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private void message(String channel) {
        lock.lock();
        try {
            Channel subscription = channels.get(channel);
            if (subscription == null || subscription.waiters.stream().anyMatch(waiter -> waiter.woken)) {
                return;
            }
            long now = System.nanoTime();
            subscription.waiters.stream().filter(waiter -> now - waiter.deafUntilNanos >= 0).findFirst().ifPresent(Waiter::wake);
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
    }
}
