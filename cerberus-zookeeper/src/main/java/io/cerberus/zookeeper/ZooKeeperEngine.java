package io.cerberus.zookeeper;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.ReleasesByForce;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper engine. Each attempt creates one ephemeral sequential node under the lock's node
 * ({@link LockPaths}); the attempt holds when no node it must wait for comes before it: for a
 * writer (exclusive, fair, write) any node; for a reader, any writer. A waiter watches only the one
 * node it waits for, so a release wakes one waiter, not the herd (a thread, or an async waiter's
 * callback: {@link NotifiesChanges}); exclusive waiters line up in the
 * core first ({@link LinesUpLocally}), so a client queues one node per lock. The fencing token is
 * the node's creating transaction id ({@code czxid}), which grows with every write to the ensemble.
 *
 * <p>Round trips: an attempt's node is created in one transaction with a write of the lock's
 * node, whose answer says how many nodes the lock had right after the create ({@link #claim}).
 * When the new node is the only one, the attempt holds the lock at once: an uncontended lock and
 * unlock is two requests (the transaction, the delete), where a create, a listing and a delete
 * take three. Otherwise the nodes are listed and the attempt waits as above; a waiter costs one
 * watch and one listing per wake-up. The transaction and the delete, the requests of every
 * uncontended cycle, are sent with ZooKeeper's synchronous API where {@link ZooKeeperRequests}
 * allows it; one left without its answer is followed up the background way.
 *
 * <p>Holds live with the client's session: nothing is renewed. When the session expires the
 * ensemble deletes the nodes and every hold is reported lost. A node is trusted only in the
 * session that made it (its owning session, kept in {@link Node}): a listing on a new session may
 * come from a member that has not yet deleted the old session's nodes, so an attempt whose node
 * belongs to another session queues again, and only a node of the current session is granted. A
 * namespace's epoch ({@link KeepsEpochs}) is the persistent node {@code ROOT/NS/.epoch} ({@link ZooKeeperEpochs}).
 */
final class ZooKeeperEngine
        implements LockEngine,
                LinesUpLocally,
                Inspects,
                KeepsIdempotencyRecords,
                NotifiesChanges,
                ReleasesByForce,
                KeepsEpochs {
    private static final System.Logger LOG = System.getLogger(ZooKeeperEngine.class.getName());
    /** A waiter tries again at least this often, even if no watch fired. */
    static final Duration RETRY_BOUND = Duration.ofSeconds(5);

    static final Set<Capability> CAPABILITIES = EnumSet.of(
            Capability.FENCING,
            Capability.FAIR,
            Capability.READ_WRITE,
            Capability.SESSION_BOUND,
            Capability.MULTI_PROCESS,
            Capability.INSPECT);

    /** Withdraws attempts while the ensemble is out of reach, off the callers' threads. */
    private static final java.util.concurrent.Executor BACKGROUND =
            java.util.concurrent.Executors.newCachedThreadPool(runnable -> {
                Thread thread = new Thread(runnable, "cerberus-zookeeper-withdraw");
                thread.setDaemon(true);
                return thread;
            });

    /** The data of a lock's node: none (its children are the queue). */
    private static final byte[] NO_DATA = new byte[0];

    /** Watch events received by waiters, in this JVM: one per release that lets a waiter move, never a herd. */
    static final java.util.concurrent.atomic.AtomicLong WAKE_UPS = new java.util.concurrent.atomic.AtomicLong();

    private final String shown;
    private final String root;
    private final CuratorFramework client;
    /** False for the application's client, given in {@link ZooKeeperOptions}: never closed here. */
    private final boolean ownsClient;

    private final org.apache.curator.framework.state.ConnectionStateListener stateListener;
    private final LossReporter losses;
    private final NamespaceOwnership namespaces;
    private final ZooKeeperRequests requests;
    private final ZooKeeperIdempotencyStore records;
    private final ZooKeeperEpochs epochs;
    /** The node of every attempt not yet released or abandoned, by token. */
    private final Map<String, Node> nodes = new ConcurrentHashMap<>();
    /** The async waiters' callbacks, on the nodes they wait for. */
    private final BlockerWatches blockerWatches;
    /** The watches on the nodes of granted holds, which see a forced release. */
    private final HoldWatches holdWatches;

    /**
     * One attempt's node; {@code session} is the session that owns it (0 when not known: a claim
     * answered across a change of session), {@code waitingFor} the node it last found in its way.
     */
    private static final class Node {
        final String path;
        final long czxid;
        final long session;
        volatile boolean granted;
        volatile String waitingFor;
        /** The watch set on the node once it has been held for a while ({@link HoldWatches}), until then pending. */
        volatile java.util.concurrent.Future<?> holdWatch;

        Node(String path, long czxid, long session) {
            this.path = path;
            this.czxid = czxid;
            this.session = session;
        }

        String name() {
            return path.substring(path.lastIndexOf('/') + 1);
        }
    }

    /**
     * @param ownAcl the ACL this client gives its nodes (its credentials' user alone), or null
     *     without credentials: then namespaces are not checked ({@link NamespaceOwnership})
     */
    ZooKeeperEngine(
            String shown,
            String root,
            CuratorFramework client,
            boolean ownsClient,
            LossReporter losses,
            Duration timeout,
            List<org.apache.zookeeper.data.ACL> ownAcl) {
        this.shown = shown;
        this.root = root;
        this.client = client;
        this.ownsClient = ownsClient;
        this.losses = losses;
        this.requests = new ZooKeeperRequests(shown, timeout, client);
        this.namespaces = new NamespaceOwnership(root, client, requests, shown, ownAcl);
        this.records = new ZooKeeperIdempotencyStore(root, client, requests, namespaces);
        this.epochs = new ZooKeeperEpochs(root, client, requests, namespaces);
        this.blockerWatches = new BlockerWatches(client);
        this.holdWatches = new HoldWatches(client);
        this.stateListener = (c, state) -> {
            if (state != org.apache.curator.framework.state.ConnectionState.READ_ONLY) {
                namespaces.connectionChanged();
            }
            switch (state) {
                case LOST -> sessionLost();
                case SUSPENDED -> {
                    LOG.log(
                            Level.WARNING,
                            "zookeeper engine " + shown + ": connection lost; holds are uncertain until it is back");
                    forEachHold(token -> losses.uncertain(
                            token,
                            "the connection to zookeeper engine " + shown
                                    + " is down; the hold lasts while the session does"));
                }
                case RECONNECTED -> {
                    refreshGrantedSession();
                    forEachHold(losses::confirmed);
                }
                case CONNECTED -> refreshGrantedSession();
                default -> {
                    // READ_ONLY: nothing held changes
                }
            }
        };
        client.getConnectionStateListenable().addListener(stateListener);
        refreshGrantedSession();
    }

    /**
     * Checks, for a client with credentials, that no one else may take its namespaces over through
     * the root ({@link NamespaceOwnership#checkRoot}). Called once the engine is open.
     *
     * @throws io.cerberus.UnsafeEngineException if the root's ACL lets another identity delete its children
     */
    void checkRoot() {
        namespaces.checkRoot();
    }

    @Override
    public List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        namespaces.checkRoot();
        return List.of();
    }

    /**
     * @return the session timeout the ensemble granted the client's current session, in
     *     milliseconds, or 0 while it has none
     */
    static int grantedSessionMillis(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception e) {
            return 0; // no session now: the caller keeps what it knew
        }
    }

    /** A new session may have been granted another timeout; keeps the last one known while there is none. */
    private void refreshGrantedSession() {
        int granted = grantedSessionMillis(client);
        if (granted > 0) {
            requests.grantedSession(Duration.ofMillis(granted));
        }
    }

    /**
     * A silent client's nodes go when its session times out on the ensemble: the timeout it granted
     * (read when a session is established, so this costs nothing per call).
     */
    @Override
    public Optional<Duration> silentHolderExpiry(Duration lease) {
        return Optional.of(requests.grantedSession());
    }

    private void forEachHold(java.util.function.Consumer<String> action) {
        nodes.forEach((token, node) -> {
            if (node.granted) {
                action.accept(token);
            }
        });
    }

    private void sessionLost() {
        for (Map.Entry<String, Node> entry : nodes.entrySet()) {
            if (entry.getValue().granted) {
                losses.lost(entry.getKey(), "the ZooKeeper session expired, and with it the node that held the lock");
            }
        }
        nodes.clear();
    }

    @Override
    public String describe() {
        return shown;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        namespaces.verify(attempt.key().namespace());
        String dir = LockPaths.lock(root, attempt.key());
        long session = requests.sessionId();
        Node node = nodes.get(attempt.token());
        if (node != null && session != 0 && node.session != session) {
            // made in a session that has ended (the ensemble deletes its nodes), or not known to be this one: a
            // listing through a member that is behind may still show it, so it is never trusted again
            dropForeign(attempt, node);
            node = null;
        }
        List<String> children;
        if (node == null) {
            Queued queued = enqueue(dir, attempt);
            node = queued.node();
            children = queued.children();
        } else {
            children = children(dir);
        }
        node = dropDuplicates(dir, attempt, node, children, session);
        int index = children.indexOf(node.name());
        if (index < 0) {
            // our node is gone (the session was replaced): queue again
            nodes.remove(attempt.token());
            Queued queued = enqueue(dir, attempt);
            node = queued.node();
            children = queued.children();
            index = children.indexOf(node.name());
        }
        String blocker = blocker(children, index, attempt.mode().isShared());
        if (blocker == null) {
            long now = requests.sessionId();
            if (now == 0) {
                // no session now: nothing tells whose the node is (the caller tries again after an outage pause)
                throw requests.failure("acquire " + attempt, new KeeperException.ConnectionLossException());
            }
            if (node.session != now) {
                // the session changed while the node was made or listed: the next try queues again in the new one
                dropForeign(attempt, node);
                return AcquireResult.busy(Duration.ZERO);
            }
            node.granted = true;
            node.waitingFor = null;
            Node held = node;
            node.holdWatch = holdWatches.watchLater(
                    node.path, () -> nodes.get(attempt.token()) == held, () -> deletedByAnother(attempt.token(), held));
            return AcquireResult.granted(node.czxid);
        }
        node.waitingFor = dir + "/" + blocker;
        return AcquireResult.busy(RETRY_BOUND);
    }

    /**
     * The node of a hold is gone while the client still counts it as held: another client deleted it
     * (a forced release), since the client's own release and withdrawal forget a node before they
     * delete it, and the end of a session is reported by {@link #sessionLost}.
     */
    private void deletedByAnother(String token, Node node) {
        if (node.granted && nodes.remove(token, node)) {
            losses.lost(
                    token,
                    "its node " + node.path + " on zookeeper engine " + shown
                            + " was deleted by another client (a forced release)");
        }
    }

    /**
     * Forgets a node of another session than the client's: deletes it if its session is not known
     * (it may be a live node of this session), else leaves it to go with its ended session.
     */
    private void dropForeign(Acquisition attempt, Node node) {
        nodes.remove(attempt.token(), node);
        if (node.session == 0) {
            try {
                delete(node.path);
            } catch (RuntimeException e) {
                LOG.log(
                        Level.WARNING,
                        "zookeeper engine " + shown + ": could not delete " + node.path + " of " + attempt
                                + ", made across a change of session; it goes with the session",
                        e);
            }
        }
    }

    /** A new node of an attempt, and the lock's nodes as they were when it was created or later. */
    private record Queued(Node node, List<String> children) {}

    /**
     * Creates the attempt's node, and lists the lock's nodes unless the create alone shows that
     * the new node is the only one. See {@link #claim}; when the lock's node is missing it is
     * created (a container) and the claim sent once more; when the claim cannot be made at all
     * (the lock's node keeps disappearing, or its ACL lets this client create nodes in it but not
     * write it), a plain create and a listing do the same.
     */
    private Queued enqueue(String dir, Acquisition attempt) {
        Claim claimed = claim(dir, attempt);
        if (claimed.code() == KeeperException.Code.NONODE && createLockNode(dir)) {
            claimed = claim(dir, attempt);
        }
        if (claimed.code() != KeeperException.Code.OK) {
            // a refused transaction wrote nothing; one whose answer a connection loss or an interrupt
            // took may have created a node, which dropDuplicates then finds by the attempt's token
            Node node = create(dir, attempt);
            nodes.put(attempt.token(), node);
            return new Queued(node, children(dir));
        }
        Stat lock = claimed.lock();
        // the write of the lock's node was part of the create's transaction: its zxid is the new node's czxid
        Node node = new Node(claimed.created(), lock.getMzxid(), claimed.session());
        nodes.put(attempt.token(), node);
        if (lock.getNumChildren() == 1) {
            // the new node was the lock's only one when it was created: no earlier attempt is in its way
            return new Queued(node, List.of(node.name()));
        }
        return new Queued(node, children(dir));
    }

    /**
     * Creates the attempt's node and, in the same transaction, writes the lock's node (the same
     * empty data it was created with). The write's answer is the lock node's stat right after the
     * create, read atomically with it: its number of children tells whether the new node is alone
     * (then the attempt holds the lock without a listing), and its mzxid is the transaction's id,
     * which is the new node's czxid. One round trip where a create and a listing take two.
     *
     * @return the answer: OK, or the code of the operation that failed or of the expired session
     *     (nothing is then written), or CONNECTIONLOSS when no answer came (an interrupt, a lost
     *     connection: a node may have been made)
     */
    private Claim claim(String dir, Acquisition attempt) {
        List<CuratorOp> ops;
        try {
            ops = List.of(
                    client.transactionOp()
                            .create()
                            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath(
                                    dir + "/" + LockPaths.nodePrefix(attempt.mode(), attempt.token()),
                                    attempt.holder().getBytes(StandardCharsets.UTF_8)),
                    client.transactionOp().setData().forPath(dir, NO_DATA));
        } catch (Exception e) {
            throw requests.failure("acquire " + attempt, e);
        }
        if (requests.canSendDirect()) {
            try {
                long[] session = new long[1];
                List<OpResult> results = requests.direct(() -> "acquire " + attempt, zooKeeper -> {
                    List<OpResult> answered =
                            zooKeeper.multi(List.of(ops.get(0).get(), ops.get(1).get()));
                    session[0] = zooKeeper.getSessionId(); // a handle keeps its session: the one that made the node
                    return answered;
                });
                return results == null
                        ? Claim.refused(KeeperException.Code.CONNECTIONLOSS)
                        : new Claim(
                                KeeperException.Code.OK,
                                ((OpResult.CreateResult) results.get(0)).getPath(),
                                ((OpResult.SetDataResult) results.get(1)).getStat(),
                                session[0]);
            } catch (KeeperException e) {
                return Claim.refused(e.code());
            }
        }
        long before = requests.sessionId();
        CuratorEvent claimed = requests.sendAcquiring(
                () -> "acquire " + attempt,
                callback -> client.transaction().inBackground(callback).forOperations(ops),
                this::deleteLateNode);
        if (claimed.getResultCode() != KeeperException.Code.OK.intValue()) {
            return Claim.refused(KeeperException.Code.get(claimed.getResultCode()));
        }
        // a multi returns no stat of the new node: its owner is the session the claim began and ended in, if one
        long session = requests.sessionId() == before ? before : 0;
        return new Claim(
                KeeperException.Code.OK,
                claimed.getOpResults().get(0).getResultPath(),
                claimed.getOpResults().get(1).getResultStat(),
                session);
    }

    /**
     * The answer to a claim: the new node's path, the lock node's stat right after and the session
     * that made the node (0 if not known), when {@code code} is OK.
     */
    private record Claim(KeeperException.Code code, String created, Stat lock, long session) {
        static Claim refused(KeeperException.Code code) {
            return new Claim(code, null, null, 0);
        }
    }

    /**
     * Creates the lock's node (and any missing parent) as a container, as the plain create does
     * for its parents: the ensemble deletes it once it has had children and has none left.
     *
     * @return whether it exists now
     */
    private boolean createLockNode(String dir) {
        CuratorEvent created = requests.sendAcquiring(
                () -> "create " + dir,
                callback -> client.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.CONTAINER)
                        .inBackground(callback)
                        .forPath(dir, NO_DATA),
                null);
        return created.getResultCode() == KeeperException.Code.OK.intValue()
                || ZooKeeperRequests.failedWith(created, KeeperException.Code.NODEEXISTS);
    }

    /**
     * A create whose answer was lost to a connection loss may be sent again by Curator and leave two
     * nodes with this attempt's token: the first, whose owner would never delete it, would block the
     * lock for as long as the session lives. Keeps the earliest of the client's session {@code
     * session} (the attempt's place in the queue) and deletes the later ones; a node of an ended
     * session that a listing through a member behind still shows is passed over, never adopted.
     * {@code children} is updated in place.
     */
    private Node dropDuplicates(String dir, Acquisition attempt, Node node, List<String> children, long session) {
        String prefix = LockPaths.nodePrefix(attempt.mode(), attempt.token());
        List<String> mine =
                children.stream().filter(child -> child.startsWith(prefix)).toList();
        if (mine.size() < 2) {
            return node;
        }
        Node kept = null;
        for (String child : mine) {
            if (kept != null) {
                delete(dir + "/" + child);
                children.remove(child);
            } else if (child.equals(node.name())) {
                kept = node;
            } else {
                String path = dir + "/" + child;
                CuratorEvent read = requests.send(
                        "read " + path,
                        callback -> client.checkExists().inBackground(callback).forPath(path));
                boolean gone = ZooKeeperRequests.failedWith(read, KeeperException.Code.NONODE);
                if (!gone) {
                    requests.check(read, "read " + path);
                }
                Stat stat = gone ? null : read.getStat();
                if (stat != null && session != 0 && stat.getEphemeralOwner() == session) {
                    kept = new Node(path, stat.getCzxid(), session);
                    nodes.put(attempt.token(), kept);
                    LOG.log(
                            Level.INFO,
                            "zookeeper engine " + shown + ": " + attempt + " had " + mine.size()
                                    + " nodes after a connection loss; kept " + child);
                } else {
                    children.remove(child); // gone, or going with its ended session
                }
            }
        }
        return kept != null ? kept : node;
    }

    /** @return the node this one waits for: the previous node for a writer, the nearest earlier writer for a reader */
    private static String blocker(List<String> children, int index, boolean shared) {
        if (index <= 0) {
            return null;
        }
        if (!shared) {
            return children.get(index - 1);
        }
        for (int i = index - 1; i >= 0; i--) {
            if (!LockPaths.isReader(children.get(i))) {
                return children.get(i);
            }
        }
        return null;
    }

    private Node create(String dir, Acquisition attempt) {
        long before = requests.sessionId();
        Stat stat = new Stat();
        CuratorEvent created = requests.sendAcquiring(
                () -> "acquire " + attempt,
                callback -> client.create()
                        .storingStatIn(stat)
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .inBackground(callback)
                        .forPath(
                                dir + "/" + LockPaths.nodePrefix(attempt.mode(), attempt.token()),
                                attempt.holder().getBytes(StandardCharsets.UTF_8)),
                this::deleteLateNode);
        requests.check(created, () -> "acquire " + attempt);
        Stat actual = created.getStat() != null ? created.getStat() : stat;
        long owner = actual.getEphemeralOwner() != 0
                ? actual.getEphemeralOwner()
                : requests.sessionId() == before ? before : 0;
        return new Node(created.getName(), actual.getCzxid(), owner);
    }

    /**
     * A create carried out after its caller gave up (sent again by Curator when a connection was
     * back): nobody owns the node, which would stand in the queue for as long as the session lives.
     */
    private void deleteLateNode(CuratorEvent late) {
        if (late.getResultCode() != KeeperException.Code.OK.intValue()) {
            return;
        }
        // a plain create names its node; a claim's transaction names it in its first result
        String node = late.getOpResults() != null && !late.getOpResults().isEmpty()
                ? late.getOpResults().get(0).getResultPath()
                : late.getName();
        if (node != null) {
            try {
                client.delete().guaranteed().inBackground().forPath(node);
            } catch (Exception e) {
                LOG.log(
                        Level.WARNING,
                        "zookeeper engine " + shown + ": could not delete " + node
                                + ", made by an acquisition given up before it was answered; it goes with the session: "
                                + e);
            }
        }
    }

    private List<String> children(String dir) {
        if (requests.canSendDirect()) {
            try {
                List<String> listed =
                        requests.direct(() -> "list " + dir, zooKeeper -> zooKeeper.getChildren(dir, false));
                if (listed != null) {
                    return bySequence(listed);
                }
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            } catch (KeeperException e) {
                throw requests.failure("list " + dir, e);
            }
            // no answer (an interrupt, a lost connection): a read is safe to send again, the background way
        }
        CuratorEvent listed = requests.sendAcquiring(
                () -> "list " + dir,
                callback -> client.getChildren().inBackground(callback).forPath(dir),
                null);
        if (listed.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            return List.of();
        }
        requests.check(listed, () -> "list " + dir);
        return bySequence(listed.getChildren());
    }

    private static List<String> bySequence(List<String> names) {
        List<String> children = new ArrayList<>(names);
        children.sort(Comparator.comparingLong(LockPaths::sequence));
        return children;
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        Node node = nodes.get(attempt.token());
        String blocker = node == null ? null : node.waitingFor;
        if (blocker == null) {
            return;
        }
        CountDownLatch changed = new CountDownLatch(1);
        if (requests.canSendDirect()) {
            Boolean exists;
            try {
                exists = requests.direct(
                        () -> "watch " + blocker,
                        zooKeeper -> zooKeeper.exists(blocker, event -> {
                                    WAKE_UPS.incrementAndGet();
                                    changed.countDown();
                                })
                                != null);
            } catch (KeeperException e) {
                throw requests.failure("watch " + blocker, e);
            }
            if (exists != null) {
                if (exists) {
                    changed.await(max.toNanos(), TimeUnit.NANOSECONDS);
                }
                return;
            }
            // no answer (an interrupt, a lost connection): watch again the background way
        }
        CuratorWatcher watcher = event -> {
            WAKE_UPS.incrementAndGet();
            changed.countDown();
        };
        CuratorEvent watched = requests.sendAcquiring(
                () -> "watch " + blocker,
                callback -> client.checkExists()
                        .usingWatcher(watcher)
                        .inBackground(callback)
                        .forPath(blocker),
                null);
        if (watched.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            return;
        }
        requests.check(watched, () -> "watch " + blocker);
        changed.await(max.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Watches the node the attempt waits for, as {@link #awaitChange} does, with a callback instead
     * of a waiting thread ({@link BlockerWatches}); an attempt that waits for nothing is woken at once.
     */
    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        Node node = nodes.get(attempt.token());
        String blocker = node == null ? null : node.waitingFor;
        if (blocker == null) {
            wake.run();
            return () -> {};
        }
        return blockerWatches.onChange(blocker, wake);
    }

    /** @return the async waiters' callbacks registered now (for tests) */
    int changeCallbacks() {
        return blockerWatches.registered();
    }

    @Override
    public void abandon(Acquisition attempt) {
        Node node = nodes.remove(attempt.token());
        if (!client.getZookeeperClient().isConnected()) {
            // the ensemble is out of reach (it may be dead, and the client switching away from it): the
            // caller must not wait for it. The withdrawal goes on in the background until the connection
            // is back or the session is gone, and with it the attempt's node
            BACKGROUND.execute(() -> {
                try {
                    withdraw(attempt, node);
                } catch (RuntimeException e) {
                    LOG.log(
                            Level.DEBUG,
                            () -> "could not withdraw " + attempt + " (its node goes with the session): "
                                    + e.getMessage());
                }
            });
            return;
        }
        withdraw(attempt, node);
    }

    /** Deletes the attempt's node: the one it made, or one a create whose answer was lost left behind. */
    private void withdraw(Acquisition attempt, Node node) {
        if (node != null) {
            delete(node.path);
            return;
        }
        // a create whose answer was lost may have left a node behind: find it by its token
        String dir = LockPaths.lock(root, attempt.key());
        String prefix = LockPaths.nodePrefix(attempt.mode(), attempt.token());
        for (String child : children(dir)) {
            if (child.startsWith(prefix)) {
                delete(dir + "/" + child);
            }
        }
    }

    /** @return whether the node was there to delete */
    private boolean delete(String path) {
        if (!requests.canSendDirect()) {
            return deleteInBackground(path);
        }
        long session = requests.sessionId();
        try {
            if (requests.direct(() -> "delete " + path, zooKeeper -> {
                        zooKeeper.delete(path, -1);
                        return Boolean.TRUE;
                    })
                    != null) {
                return true;
            }
        } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
            return false; // gone already, or with the expired session
        } catch (KeeperException e) {
            throw requests.failure("delete " + path, e);
        }
        // no answer (an interrupt, a lost connection): the delete may have been carried out. Send it
        // again the background way, which is answered after it. A node found gone in the same session
        // was deleted by the first; in a new one it went with the expired session: a loss
        return deleteInBackground(path) || (session != 0 && requests.sessionId() == session);
    }

    private boolean deleteInBackground(String path) {
        CuratorEvent deleted = requests.send(
                () -> "delete " + path,
                callback -> client.delete().guaranteed().inBackground(callback).forPath(path));
        if (deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            return false;
        }
        requests.check(deleted, () -> "delete " + path);
        return true;
    }

    @Override
    public boolean renew(Acquisition attempt) {
        Node node = nodes.get(attempt.token());
        if (node == null) {
            return false;
        }
        CuratorEvent exists = requests.send(
                () -> "check " + attempt,
                callback -> client.checkExists().inBackground(callback).forPath(node.path));
        if (exists.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            return false;
        }
        requests.check(exists, () -> "check " + attempt);
        return exists.getStat() != null;
    }

    @Override
    public boolean release(Acquisition attempt) {
        Node node = nodes.remove(attempt.token());
        if (node != null && node.holdWatch != null) {
            node.holdWatch.cancel(false);
        }
        return node != null && delete(node.path);
    }

    /**
     * Lists the lock's nodes, reads the czxid of those that hold (not of the waiters) and deletes the
     * one whose czxid is the token. A node's name carries its attempt's random token, so the path
     * read is the node deleted; a node deleted and made again since has a newer czxid, and is not
     * found. The next waiter's watch on the deleted node wakes it, as after a release; the holder's
     * engine learns from its own watch on the node ({@link HoldWatches}) and reports the loss.
     */
    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        String dir = LockPaths.lock(root, key);
        List<String> children = children(dir);
        for (int i = 0; i < children.size(); i++) {
            if (blocker(children, i, LockPaths.isReader(children.get(i))) != null) {
                continue; // a waiter, not a hold
            }
            String path = dir + "/" + children.get(i);
            CuratorEvent read = requests.send(
                    "read " + path,
                    callback -> client.checkExists().inBackground(callback).forPath(path));
            if (read.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                continue;
            }
            requests.check(read, "read " + path);
            if (read.getStat() != null && read.getStat().getCzxid() == fencingToken) {
                return delete(path);
            }
        }
        return false;
    }

    @Override
    public boolean isLocked(LockKey key) {
        return !children(LockPaths.lock(root, key)).isEmpty();
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        String dir = LockPaths.namespace(root, namespace);
        List<String> names = children(dir);
        List<LockInfo> infos = new ArrayList<>();
        for (String encoded : names) {
            String name = LockPaths.decode(encoded);
            if (encoded.startsWith(".") || !name.startsWith(prefix)) {
                // an encoded lock name never starts with a dot: the idempotency records' directory or the epoch
                continue;
            }
            List<String> children = children(dir + "/" + encoded);
            List<String> holders = new ArrayList<>();
            for (int i = 0; i < children.size(); i++) {
                if (blocker(children, i, LockPaths.isReader(children.get(i))) == null) {
                    holders.add(children.get(i));
                }
            }
            for (String holder : holders) {
                String path = dir + "/" + encoded + "/" + holder;
                CuratorEvent read = requests.send(
                        "read " + path,
                        callback -> client.getData().inBackground(callback).forPath(path));
                if (read.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    continue;
                }
                requests.check(read, "read " + path);
                infos.add(new LockInfo(
                        name,
                        LockPaths.isReader(holder) ? "read" : "exclusive",
                        new String(read.getData(), StandardCharsets.UTF_8),
                        read.getStat().getCzxid(),
                        Optional.empty(),
                        children.size() - holders.size()));
            }
        }
        return infos;
    }

    @Override
    public long epoch(String namespace) {
        return epochs.epoch(namespace);
    }

    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        return epochs.raise(namespace, atLeast);
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return records;
    }

    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(stateListener);
        if (ownsClient) {
            nodes.clear(); // no hold watch reports the nodes the session's end deletes
            client.close(); // ends the session: ZooKeeper deletes every node it still had
            return;
        }
        // the application's session lives on, and with it any node left here: delete them, retried by
        // Curator in the background for as long as the client lives (forgotten first: not a forced release)
        List<Node> left = new ArrayList<>(nodes.values());
        nodes.clear();
        for (Node node : left) {
            try {
                client.delete().guaranteed().inBackground().forPath(node.path);
            } catch (Exception e) {
                LOG.log(
                        Level.WARNING,
                        "zookeeper engine " + shown + ": could not delete " + node.path + " on close: " + e);
            }
        }
    }
}
