package io.cerberus.zookeeper;

import io.cerberus.spi.NotifiesChanges;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * The callbacks of async waiters, each on the node its attempt waits for (its blocker), woken by a
 * ZooKeeper watch with no thread waiting: the engine's side of {@link NotifiesChanges}.
 *
 * <p>A callback is added to its blocker's set, then an {@code exists} with a watch is sent in the
 * background; a blocker already gone (no node) calls it at once, and the watch wakes the set when
 * the blocker changes. So a delete before the registration, between it and the watch, or after, is
 * never missed. Every watch is the one {@link #watcher} object, which ZooKeeper keeps once per path
 * however often it is set: cancelled callbacks leave nothing behind but that one watch on a node
 * that goes when its holder lets go. Callbacks run on ZooKeeper's event thread, each at most once.
 */
final class BlockerWatches {
    private final CuratorFramework client;
    /** The waiting callbacks, by blocker path; a path with none is removed. */
    private final Map<String, Set<Callback>> byBlocker = new ConcurrentHashMap<>();

    private final Watcher watcher = this::changed;

    BlockerWatches(CuratorFramework client) {
        this.client = client;
    }

    /** One registration: its wake-up, taken by whichever of the call and the cancel comes first. */
    private final class Callback implements NotifiesChanges.ChangeWatch {
        final String blocker;
        final AtomicReference<Runnable> wake;

        Callback(String blocker, Runnable wake) {
            this.blocker = blocker;
            this.wake = new AtomicReference<>(wake);
        }

        void call() {
            remove(this);
            Runnable taken = wake.getAndSet(null);
            if (taken != null) {
                ZooKeeperEngine.WAKE_UPS.incrementAndGet();
                taken.run();
            }
        }

        @Override
        public void cancel() {
            wake.set(null);
            remove(this);
        }
    }

    /**
     * Calls {@code wake} once when {@code blocker} changes (or is gone already).
     *
     * @param blocker the path of the node waited for
     * @return the registration, for the core to cancel
     */
    NotifiesChanges.ChangeWatch onChange(String blocker, Runnable wake) {
        Callback callback = new Callback(blocker, wake);
        byBlocker.compute(blocker, (path, set) -> {
            Set<Callback> callbacks = set != null ? set : ConcurrentHashMap.newKeySet();
            callbacks.add(callback);
            return callbacks;
        });
        try {
            client.checkExists()
                    .usingWatcher(watcher)
                    .inBackground((framework, event) -> answered(callback, event))
                    .forPath(blocker);
        } catch (Exception e) {
            callback.call(); // not sent (a closed client): the attempt asks again and learns why
        }
        return callback;
    }

    /** The {@code exists} was answered: a blocker gone, or an answer that sets no watch, wakes at once. */
    private static void answered(Callback callback, CuratorEvent event) {
        if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
            callback.call();
        }
    }

    /** A watched blocker changed, or the connection did (no path): wake who waits on it, or everyone. */
    private void changed(WatchedEvent event) {
        String path = event.getPath();
        if (path == null) {
            byBlocker.keySet().forEach(this::wakeAll);
        } else {
            wakeAll(path);
        }
    }

    private void wakeAll(String blocker) {
        Set<Callback> callbacks = byBlocker.remove(blocker);
        if (callbacks != null) {
            callbacks.forEach(Callback::call);
        }
    }

    private void remove(Callback callback) {
        byBlocker.computeIfPresent(callback.blocker, (path, set) -> {
            set.remove(callback);
            return set.isEmpty() ? null : set;
        });
    }

    /** @return how many callbacks wait now (for tests) */
    int registered() {
        return byBlocker.values().stream().mapToInt(Set::size).sum();
    }
}
