package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

/**
 * Makes sure the nodes a client with credentials relies on belong to its application before its
 * locks and records go in them. Whoever may delete a child of a node, or change the node's ACL,
 * can remove an empty namespace node and create it again with an ACL of their own, and from then
 * on delete or block this application's holds. Two checks:
 *
 * <ul>
 *   <li>The root: no identity but this client's own may delete its children or change its ACL
 *       ({@code DELETE}, {@code ADMIN}); anyone may read it and create in it (that is how
 *       applications share it). Checked at open, by {@link io.cerberus.Cerberus#checkEngine},
 *       and with every namespace check; a root that fails is an {@link UnsafeEngineException}.
 *       The nodes above the root do not matter once a namespace lives in it: a node with a child
 *       cannot be deleted.</li>
 *   <li>A namespace node: created persistent (it never goes by itself), its ACL must be exactly
 *       the one this client gives its nodes; any other is an {@link EngineUnavailableException}.
 *       Checked before the first lock or record in the namespace, and again after every change of
 *       the connection (a reconnection, a new session): what was true before the client lost
 *       sight of the ensemble is not trusted after it. A check is kept with the session id and
 *       the count of connection changes it was made under, so a new session is seen even before
 *       its event arrives.</li>
 * </ul>
 *
 * Clients without credentials check nothing: their own nodes are open to every client anyway.
 * Thread-safe.
 */
final class NamespaceOwnership {
    private static final int TAKES_OVER = ZooDefs.Perms.DELETE | ZooDefs.Perms.ADMIN;

    private final String root;
    private final CuratorFramework client;
    private final ZooKeeperRequests requests;
    private final String shown;
    /** The ACL this client gives the nodes it creates, or null when it has no credentials. */
    private final Set<ACL> own;
    /** The identities of {@link #own}. */
    private final Set<Id> ownIds;
    /** Each namespace checked, with the connection it was checked on. */
    private final Map<String, Connection> verified = new ConcurrentHashMap<>();
    /** Counts the changes of connection state this engine heard of. */
    private final AtomicLong generation = new AtomicLong();

    /** A connection: the session, and the number of state changes heard before it. */
    private record Connection(long generation, long session) {}

    NamespaceOwnership(String root, CuratorFramework client, ZooKeeperRequests requests, String shown, List<ACL> own) {
        this.root = root;
        this.client = client;
        this.requests = requests;
        this.shown = shown;
        this.own = own == null ? null : Set.copyOf(own);
        this.ownIds =
                own == null ? Set.of() : Set.copyOf(own.stream().map(ACL::getId).toList());
    }

    /** Forgets every check: the connection changed, so each namespace is checked again at its next use. */
    void connectionChanged() {
        generation.incrementAndGet();
        verified.clear();
    }

    /**
     * @throws UnsafeEngineException if the root exists and lets another identity delete its
     *     children or change its ACL, or this client may not read its ACL
     * @throws EngineUnavailableException if the ensemble does not answer
     */
    void checkRoot() {
        if (own == null) {
            return;
        }
        CuratorEvent read = requests.send(
                () -> "read the ACL of the root " + root,
                callback -> client.getACL().inBackground(callback).forPath(root));
        if (ZooKeeperRequests.failedWith(read, KeeperException.Code.NONODE)) {
            return; // made with a safe ACL by the first namespace check, which checks it again
        }
        if (ZooKeeperRequests.failedWith(read, KeeperException.Code.NOAUTH)) {
            throw openRoot("an ACL this user may not even read, so who may delete its namespaces cannot be known");
        }
        requests.check(read, () -> "read the ACL of the root " + root);
        List<ACL> takeOver = new ArrayList<>();
        for (ACL entry : read.getACLList()) {
            if ((entry.getPerms() & TAKES_OVER) != 0 && !ownIds.contains(entry.getId())) {
                takeOver.add(entry);
            }
        }
        if (!takeOver.isEmpty()) {
            throw openRoot("the ACL " + read.getACLList() + ", in which " + takeOver + " may delete its namespace nodes"
                    + " (DELETE) or give itself that right (ADMIN)");
        }
    }

    private UnsafeEngineException openRoot(String acl) {
        return new UnsafeEngineException("zookeeper engine " + shown + ": the root " + root + " has " + acl + ". With"
                + " credentials each application relies on its namespace node staying its own, and whoever may delete it"
                + " when it is empty may create it again with their own ACL and then delete or block this application's"
                + " locks. Have an administrator give the root an ACL that lets anyone read and create but no one else delete"
                + " or administer (setAcl " + root + " world:anyone:rc), or use a root path of the application's own");
    }

    /**
     * @param namespace the namespace about to be used
     * @throws EngineUnavailableException if its node has an ACL that is not this application's own
     * @throws UnsafeEngineException if the root lets another identity take the namespace node over
     */
    void verify(String namespace) {
        if (own == null) {
            return;
        }
        Connection checkedOn = new Connection(generation.get(), requests.sessionId());
        if (checkedOn.session() != 0 && checkedOn.equals(verified.get(namespace))) {
            return;
        }
        String path = LockPaths.namespace(root, namespace);
        CuratorEvent created = requests.send(
                () -> "create the namespace node " + path,
                callback -> client.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.PERSISTENT)
                        .inBackground(callback)
                        .forPath(path, new byte[0]));
        if (!ZooKeeperRequests.failedWith(created, KeeperException.Code.NODEEXISTS)) {
            requests.check(created, () -> "create the namespace node " + path);
        }
        checkRoot();
        CuratorEvent read = requests.send(
                () -> "read the ACL of " + path,
                callback -> client.getACL().inBackground(callback).forPath(path));
        if (ZooKeeperRequests.failedWith(read, KeeperException.Code.NOAUTH)) {
            throw notOwn(namespace, path, "an ACL this user may not even read");
        }
        requests.check(read, () -> "read the ACL of " + path);
        Set<ACL> actual = new HashSet<>(read.getACLList());
        if (!actual.equals(own)) {
            throw notOwn(namespace, path, "the ACL " + read.getACLList());
        }
        verified.put(namespace, checkedOn);
    }

    private EngineUnavailableException notOwn(String namespace, String path, String acl) {
        return new EngineUnavailableException(
                "zookeeper engine " + shown + ": the node of namespace '" + namespace + "' (" + path
                        + ") has " + acl + ", not this application's own (" + own
                        + "). Someone else created it (before this"
                        + " application did, or after deleting it), and could delete or block its locks. Have an administrator delete"
                        + " the node (the application then creates it), or use another namespace",
                null);
    }
}
