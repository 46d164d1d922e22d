package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;

/**
 * The epochs of the ZooKeeper engine ({@link io.cerberus.spi.KeepsEpochs}): the epoch of a namespace is the decimal
 * text of the persistent node {@code ROOT/NS/.epoch}, beside the namespace's locks (an encoded lock name never
 * contains a dot, so no lock can meet it). No node is epoch 0. A raise is a compare-and-set on the ensemble: the node
 * is created if absent, else written with the version read, and read again when another client got there first; the
 * epoch only goes up, so every round either finds it high enough or is beaten by a raise. A request sent again
 * after a lost answer is refused ({@code NODEEXISTS}, {@code BADVERSION}) and the next round reads what it did.
 * Round trips: a read 1, a raise 2 (read, write). Thread-safe.
 */
final class ZooKeeperEpochs {
    /** The node of a namespace's epoch, beside its locks and {@link ZooKeeperIdempotencyStore#RECORDS}. */
    static final String EPOCH = ".epoch";

    private final String root;
    private final CuratorFramework client;
    private final ZooKeeperRequests requests;
    private final NamespaceOwnership namespaces;

    ZooKeeperEpochs(String root, CuratorFramework client, ZooKeeperRequests requests, NamespaceOwnership namespaces) {
        this.root = root;
        this.client = client;
        this.requests = requests;
        this.namespaces = namespaces;
    }

    /** @return the node of the namespace's epoch */
    static String path(String root, String namespace) {
        return LockPaths.namespace(root, namespace) + "/" + EPOCH;
    }

    /**
     * @return the namespace's epoch, 0 if it was never raised
     * @throws EngineUnavailableException if the ensemble does not answer or refuses
     */
    long epoch(String namespace) {
        namespaces.verify(namespace);
        Read read = read(namespace);
        return read == null ? 0 : read.epoch();
    }

    /**
     * @return the namespace's epoch after raising it to {@code atLeast} if it was lower
     * @throws EngineUnavailableException if the ensemble does not answer or refuses
     */
    long raise(String namespace, long atLeast) {
        namespaces.verify(namespace);
        String path = path(root, namespace);
        String what = "raise the epoch of namespace '" + namespace + "' (" + path + ")";
        byte[] wanted = Long.toString(atLeast).getBytes(StandardCharsets.US_ASCII);
        while (true) {
            Read read = read(namespace);
            CuratorEvent written;
            if (read == null) {
                written = requests.send(
                        what,
                        callback -> client.create()
                                .creatingParentContainersIfNeeded()
                                .withMode(CreateMode.PERSISTENT)
                                .inBackground(callback)
                                .forPath(path, wanted));
                if (ZooKeeperRequests.failedWith(written, Code.NODEEXISTS)) {
                    continue; // created meanwhile, by another client or by this create sent again
                }
            } else if (read.epoch() >= atLeast) {
                return read.epoch();
            } else {
                written = requests.send(
                        what,
                        callback -> client.setData()
                                .withVersion(read.version())
                                .inBackground(callback)
                                .forPath(path, wanted));
                if (ZooKeeperRequests.failedWith(written, Code.BADVERSION)
                        || ZooKeeperRequests.failedWith(written, Code.NONODE)) {
                    continue; // written meanwhile, by another client or by this write sent again
                }
            }
            requests.check(written, what);
            return atLeast;
        }
    }

    /** The epoch read, and the version of its node. */
    private record Read(long epoch, int version) {}

    /** @return the epoch node's value and version, null when there is none */
    private Read read(String namespace) {
        String path = path(root, namespace);
        String what = "read the epoch of namespace '" + namespace + "' (" + path + ")";
        CuratorEvent read = requests.send(
                what, callback -> client.getData().inBackground(callback).forPath(path));
        if (ZooKeeperRequests.failedWith(read, Code.NONODE)) {
            return null;
        }
        requests.check(read, what);
        String text = new String(read.getData(), StandardCharsets.US_ASCII).strip();
        try {
            return new Read(Long.parseLong(text), read.getStat().getVersion());
        } catch (NumberFormatException e) {
            throw new EngineUnavailableException(
                    "zookeeper engine " + requests.shown() + ": the epoch node " + path + " holds '" + text
                            + "', not a number; it was written by something else than Cerberus (delete it only"
                            + " after every client of the namespace has stopped)",
                    e);
        }
    }
}
