package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;

/**
 * Makes sure a namespace's node belongs to this application before its locks and records go in
 * it. Whoever may change a node may delete its children: a namespace node that anyone (or another
 * user) created first, with an ACL of its own, would let them delete or block this application's
 * holds. So, once per namespace and engine, the node is created (persistent, so it never goes and
 * cannot be created anew by someone else) and its ACL compared with the one this client gives its
 * own nodes; any other ACL is refused. Clients without credentials check nothing: their nodes are
 * open to every client anyway. Thread-safe.
 */
final class NamespaceOwnership {
    private final String root;
    private final CuratorFramework client;
    private final ZooKeeperRequests requests;
    private final String shown;
    /** The ACL this client gives the nodes it creates, or null when it has no credentials. */
    private final Set<ACL> own;
    private final Set<String> verified = ConcurrentHashMap.newKeySet();

    NamespaceOwnership(String root, CuratorFramework client, ZooKeeperRequests requests, String shown, List<ACL> own) {
        this.root = root;
        this.client = client;
        this.requests = requests;
        this.shown = shown;
        this.own = own == null ? null : Set.copyOf(own);
    }

    /**
     * @param namespace the namespace about to be used
     * @throws EngineUnavailableException if its node has an ACL that is not this application's own
     */
    void verify(String namespace) {
        if (own == null || verified.contains(namespace)) {
            return;
        }
        String path = LockPaths.namespace(root, namespace);
        CuratorEvent created = requests.send(() -> "create the namespace node " + path, callback -> client.create()
                .creatingParentContainersIfNeeded().withMode(CreateMode.PERSISTENT).inBackground(callback).forPath(path, new byte[0]));
        if (!ZooKeeperRequests.failedWith(created, KeeperException.Code.NODEEXISTS)) {
            requests.check(created, () -> "create the namespace node " + path);
        }
        CuratorEvent read = requests.send(() -> "read the ACL of " + path, callback -> client.getACL().inBackground(callback).forPath(path));
        if (ZooKeeperRequests.failedWith(read, KeeperException.Code.NOAUTH)) {
            throw notOwn(namespace, path, "an ACL this user may not even read");
        }
        requests.check(read, () -> "read the ACL of " + path);
        Set<ACL> actual = new HashSet<>(read.getACLList());
        if (!actual.equals(own)) {
            throw notOwn(namespace, path, "the ACL " + read.getACLList());
        }
        verified.add(namespace);
    }

    private EngineUnavailableException notOwn(String namespace, String path, String acl) {
        return new EngineUnavailableException("zookeeper engine " + shown + ": the node of namespace '" + namespace + "' (" + path
                + ") has " + acl + ", not this application's own (" + own + "). Someone created it before this application did,"
                + " and could delete or block its locks. Have an administrator delete the node (the application then creates it),"
                + " or use another namespace", null);
    }
}
