package io.cerberus.zookeeper;

import java.lang.System.Logger.Level;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * Watches the node of every granted hold, so that a node another client deleted (an operator's
 * forced release) is noticed at once: a session keeps the nodes, nothing is renewed, so no renewal
 * would find the hold gone.
 *
 * <p>An {@code exists} with a watch is sent in the background when a hold is granted; a node gone
 * already calls {@code gone} from the answer, and the watch, at any change of the node, checks
 * again and re-arms (a node deleted while the connection was down shows after the reconnect, when
 * ZooKeeper sets the watches again). Connection events leave the watch in place. {@code gone} runs
 * on ZooKeeper's event thread and decides whether the node was still a hold of the client (its own
 * release deletes it too): it must return at once. One watch per held node; it ends with the node.
 */
final class HoldWatches {
    private static final System.Logger LOG = System.getLogger(HoldWatches.class.getName());

    private final CuratorFramework client;
    private final String shown;

    HoldWatches(CuratorFramework client, String shown) {
        this.client = client;
        this.shown = shown;
    }

    /**
     * Calls {@code gone} when the node at {@code path} no longer exists (at most once per deletion seen).
     *
     * @param path the held node
     * @param gone what to do then
     */
    void watch(String path, Runnable gone) {
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
            LOG.log(
                    Level.WARNING,
                    "zookeeper engine " + shown + ": could not watch " + path
                            + "; a forced release of it is noticed when the session ends: " + e);
        }
    }

    private static void answered(CuratorEvent event, Runnable gone) {
        if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            gone.run();
        }
    }
}
