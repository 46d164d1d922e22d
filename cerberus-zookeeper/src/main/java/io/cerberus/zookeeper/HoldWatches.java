package io.cerberus.zookeeper;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * Watches the nodes of holds that last, so that a node another client deleted (an operator's forced
 * release) is noticed at once: a session keeps the nodes, nothing is renewed, so no renewal would
 * find the hold gone.
 *
 * <p>A hold still held {@link #DELAY} after its grant gets an {@code exists} with a watch, sent in
 * the background: a forced release is for a lock that is stuck, and a short hold costs no request
 * more (an uncontended lock and unlock stays two requests). A node already gone when the watch is
 * set calls {@code gone} from the answer, so a deletion before the watch is not missed either. The
 * watch, at any change of the node, checks again and re-arms (a node deleted while the connection
 * was down shows after the reconnect, when ZooKeeper sets the watches again); connection events
 * leave it in place. {@code gone} runs on ZooKeeper's event thread and decides whether the node was
 * still a hold of the client (its own release deletes it too): it must return at once.
 */
final class HoldWatches {
    private static final System.Logger LOG = System.getLogger(HoldWatches.class.getName());
    /** How long a hold lasts before its node is watched. */
    static final Duration DELAY = Duration.ofSeconds(1);
    /** Watches set on nodes that existed, in this JVM (for tests). */
    static final AtomicLong WATCHED = new AtomicLong();

    /** Sets the delayed watches, for every engine of the JVM (each task is one background request). */
    private static final ScheduledThreadPoolExecutor LATER = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "cerberus-zookeeper-hold-watch");
        thread.setDaemon(true);
        return thread;
    });

    static {
        LATER.setRemoveOnCancelPolicy(true); // a released hold leaves nothing queued
    }

    private final CuratorFramework client;

    HoldWatches(CuratorFramework client) {
        this.client = client;
    }

    /**
     * Watches the node at {@code path} from {@link #DELAY} on, if {@code held} still says so then,
     * and calls {@code gone} when it no longer exists (once per deletion seen).
     *
     * @param path the held node
     * @param held whether the client still holds it
     * @param gone what to do when it is gone
     * @return the pending watch, to cancel at the release
     */
    Future<?> watchLater(String path, BooleanSupplier held, Runnable gone) {
        return LATER.schedule(
                () -> {
                    if (held.getAsBoolean()) {
                        watch(path, gone);
                    }
                },
                DELAY.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void watch(String path, Runnable gone) {
        Watcher watcher = event -> {
            if (event.getType() != Watcher.Event.EventType.None) {
                watch(path, gone);
            }
        };
        try {
            client.checkExists()
                    .usingWatcher(watcher)
                    .inBackground((framework, event) -> answered(event, gone))
                    .forPath(path);
        } catch (Exception e) {
            // the client is closing: its holds end with it
            LOG.log(Level.DEBUG, () -> "could not watch " + path + ": " + e);
        }
    }

    private static void answered(CuratorEvent event, Runnable gone) {
        if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            gone.run();
        } else if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
            WATCHED.incrementAndGet();
        }
    }
}
