package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.TransactionOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * Idempotency records in ZooKeeper. The record of id {@code NS/KEY} is the persistent node
 * {@code ROOT/NS/.idempotency/KEY} (both parts percent-encoded as in {@link LockPaths}, so no lock
 * name, which never contains a dot, can meet it), holding a {@link StoredRecord}. Its one child,
 * {@code t-TOKEN}, marks which attempt created this incarnation of the record. The directory
 * {@code .idempotency} is a container: ZooKeeper removes it once its last record is gone.
 *
 * <p>Invariants. (1) Expiry is judged on the ensemble's clock: a record ends at its node's
 * {@code mtime} plus its expiry length; "now" is the {@code mtime} the ensemble gives the
 * directory node when we write to it (one round trip, only when an existing record must be
 * judged). (2) Every change of an existing record is one multi-operation guarded by the version
 * read and by the owner token child: the version alone is not enough, since a node deleted and created
 * again starts at version 0 once more, and an owner paused between its read and its write would
 * then write into the new record; the new record has another token child, so the multi fails. A
 * completion is guarded by that child alone, so the owner's own renewals cannot make it fail; a
 * renewal read before it fails on the version, so nothing turns a completed record back. (3) An
 * expired record is taken over by a write to the same node (setData with the version read), never
 * by delete and create, so versions only grow while the node lives.
 *
 * <p>Round trips: a first claim 1 (2 when the directory must be created); a duplicate claim 3
 * (create refused, read, clock); renew and complete 3 (read, clock, write); release 2; read 1, or 2
 * when the record may have expired. Thread-safe.
 */
final class ZooKeeperIdempotencyStore implements IdempotencyStore {
    private static final System.Logger LOG = System.getLogger(ZooKeeperIdempotencyStore.class.getName());
    /** The directory of a namespace's records, beside its locks. */
    static final String RECORDS = ".idempotency";
    /**
     * The largest result a record takes. A node's data (and the whole request) must fit in
     * ZooKeeper's {@code jute.maxbuffer}, 1 MiB unless the ensemble and clients raise it; this
     * leaves room for the path, token, fingerprint and request header.
     */
    static final int MAX_RESULT_BYTES = 1_000_000;

    @Override
    public int maxResultBytes() {
        return MAX_RESULT_BYTES;
    }
    /** How often a claim tries again when the record changes under it before giving up. */
    private static final int ROUNDS = 10;

    private final String root;
    private final CuratorFramework client;
    private final ZooKeeperRequests requests;
    private final NamespaceOwnership namespaces;

    ZooKeeperIdempotencyStore(
            String root, CuratorFramework client, ZooKeeperRequests requests, NamespaceOwnership namespaces) {
        this.root = root;
        this.client = client;
        this.requests = requests;
        this.namespaces = namespaces;
    }

    /** @return the directory of the records of the namespace of {@code id} (the part before its last '/') */
    static String directory(String root, String id) {
        int slash = id.lastIndexOf('/');
        return (slash <= 0 ? root : LockPaths.namespace(root, id.substring(0, slash))) + "/" + RECORDS;
    }

    /** @return the node of the record of {@code id} */
    static String path(String root, String id) {
        return directory(root, id) + "/" + LockPaths.encode(id.substring(id.lastIndexOf('/') + 1));
    }

    private static String ownerTokenChild(String path, String token) {
        return path + "/t-" + LockPaths.encode(token);
    }

    /** A record as read, with the stat of its node. */
    private record Found(StoredRecord stored, Stat stat) {
        boolean ownedInProgress(String token) {
            return !stored.completed() && stored.token().equals(token);
        }
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        String what = "claim idempotency key " + id;
        int slash = id.lastIndexOf('/');
        if (slash > 0) {
            namespaces.verify(id.substring(0, slash));
        }
        String dir = directory(root, id);
        String path = path(root, id);
        byte[] data =
                StoredRecord.inProgress(token, fingerprint, lease.toMillis()).encode();
        Found seen = null;
        for (int round = 0; round < ROUNDS; round++) {
            CuratorEvent created = multi(
                    what,
                    () -> List.of(
                            op().create().withMode(CreateMode.PERSISTENT).forPath(path, data),
                            op().create().withMode(CreateMode.PERSISTENT).forPath(ownerTokenChild(path, token))));
            if (ZooKeeperRequests.failedWith(created, Code.NONODE)) {
                createDirectory(dir, what);
                continue;
            }
            if (!ZooKeeperRequests.failedWith(created, Code.NODEEXISTS)) {
                requests.check(created, what);
                return Optional.empty();
            }
            Found found = read(path, what);
            if (found == null) {
                continue;
            }
            if (found.ownedInProgress(token)) {
                // our own create, sent again after its answer was lost
                return Optional.empty();
            }
            seen = found;
            if (live(dir, found, what)) {
                return Optional.of(found.stored().record());
            }
            CuratorEvent taken = multi(
                    what,
                    () -> List.of(
                            op().delete()
                                    .forPath(
                                            ownerTokenChild(path, found.stored().token())),
                            op().setData()
                                    .withVersion(found.stat().getVersion())
                                    .forPath(path, data),
                            op().create().withMode(CreateMode.PERSISTENT).forPath(ownerTokenChild(path, token))));
            if (!changedMeanwhile(taken)) {
                requests.check(taken, what);
                return Optional.empty();
            }
        }
        if (seen != null) {
            // other attempts race for the key and take it over: to this caller it is in progress, never "store down"
            return Optional.of(seen.stored().record());
        }
        throw new EngineUnavailableException(
                "idempotency key " + id + " changed under each of " + ROUNDS + " tries to claim it on zookeeper engine "
                        + requests.shown() + "; many attempts race for it, try again",
                null);
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        String what = "renew idempotency key " + id;
        String path = path(root, id);
        Found found = read(path, what);
        if (found == null || !found.ownedInProgress(token) || !live(directory(root, id), found, what)) {
            return false;
        }
        CuratorEvent renewed = ownerWrite(
                what, path, found, found.stored().renewed(lease.toMillis()).encode());
        if (changedMeanwhile(renewed)) {
            // only the owner writes a record it owns: if it still does, this renewal (sent again) or another of its own
            // landed
            Found now = read(path, what);
            return now != null && now.ownedInProgress(token);
        }
        requests.check(renewed, what);
        return true;
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        if (result.length > MAX_RESULT_BYTES) {
            throw new IllegalArgumentException("the result of idempotency key " + id + " is " + result.length
                    + " bytes; the ZooKeeper store keeps at most " + MAX_RESULT_BYTES
                    + " bytes per result (a node must fit in"
                    + " ZooKeeper's jute.maxbuffer, 1 MiB by default): store a reference to the result instead");
        }
        String what = "complete idempotency key " + id;
        String path = path(root, id);
        for (int round = 0; round < ROUNDS; round++) {
            Found found = read(path, what);
            if (found == null || !found.ownedInProgress(token) || !live(directory(root, id), found, what)) {
                // completed by this token: a completion sent again after its answer was lost
                return found != null && isOwnCompletion(found, token);
            }
            byte[] data = found.stored()
                    .completedWith(result.clone(), failure, retention == null ? -1 : retention.toMillis())
                    .encode();
            // guarded by the owner token child alone: a renewal of this attempt in between changes the version, not the
            // owner;
            // a renewal read before and landing after fails on its version, so it cannot undo the completion
            CuratorEvent completed = multi(
                    what,
                    () -> List.of(
                            op().check().forPath(ownerTokenChild(path, token)),
                            op().setData().forPath(path, data)));
            if (!changedMeanwhile(completed)) {
                requests.check(completed, what);
                return true;
            }
            // changed since read: by a renewal of this same attempt (the record is still ours, read it again), or taken
            // over
        }
        throw new EngineUnavailableException(
                "idempotency key " + id + " changed under each of " + ROUNDS
                        + " tries to complete it on zookeeper engine " + requests.shown()
                        + "; its result was not stored",
                null);
    }

    private static boolean isOwnCompletion(Found found, String token) {
        return found.stored().completed() && found.stored().token().equals(token);
    }

    @Override
    public boolean release(String id, String token) {
        String what = "release idempotency key " + id;
        String path = path(root, id);
        for (int round = 0; round < ROUNDS; round++) {
            Found found = read(path, what);
            if (found == null || !found.ownedInProgress(token)) {
                return false;
            }
            CuratorEvent released = delete(what, path, found);
            if (!changedMeanwhile(released)) {
                requests.check(released, what);
                return true;
            }
            // changed since read: by a renewal of this same attempt (read it again), or taken over
        }
        return false;
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        String what = "read idempotency key " + id;
        String path = path(root, id);
        Found found = read(path, what);
        if (found == null) {
            return Optional.empty();
        }
        if (live(directory(root, id), found, what)) {
            return Optional.of(found.stored().record());
        }
        CuratorEvent deleted = delete("delete expired idempotency key " + id, path, found);
        if (!changedMeanwhile(deleted)) {
            requests.check(deleted, what);
        }
        return Optional.empty();
    }

    /**
     * Waits on a one-shot data watch of the record. Returns at once if there is no record or it is
     * completed (nothing more will happen to it but its expiry), and waits at most the record's
     * lease, after which it may have expired (expiry fires no watch).
     */
    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        String what = "watch idempotency key " + id;
        String path = path(root, id);
        CountDownLatch changed = new CountDownLatch(1);
        CuratorWatcher watcher = event -> changed.countDown();
        CuratorEvent watched = requests.send(
                what,
                callback -> client.getData()
                        .usingWatcher(watcher)
                        .inBackground(callback)
                        .forPath(path));
        if (ZooKeeperRequests.failedWith(watched, Code.NONODE)) {
            return;
        }
        requests.check(watched, what);
        StoredRecord stored = StoredRecord.decode(watched.getData(), path);
        long wait = atMost.toMillis();
        if (stored.expiryMillis() >= 0) {
            wait = Math.min(wait, stored.expiryMillis() + 1);
        }
        try {
            if (stored.completed() || !changed.await(Math.max(0, wait), TimeUnit.MILLISECONDS)) {
                forget(watcher, path);
            }
        } catch (InterruptedException e) {
            forget(watcher, path);
            throw e;
        }
    }

    @Override
    public boolean notifiesChanges() {
        return true;
    }

    /** Removes a watch that did not fire, so waits that time out do not pile up watchers. */
    private void forget(CuratorWatcher watcher, String path) {
        try {
            client.watchers()
                    .remove(watcher)
                    .ofType(Watcher.WatcherType.Data)
                    .quietly()
                    .inBackground()
                    .forPath(path);
        } catch (Exception e) {
            LOG.log(Level.DEBUG, "could not remove the watch of " + path + ": " + e);
        }
    }

    private Found read(String path, String what) {
        CuratorEvent read = requests.send(
                what, callback -> client.getData().inBackground(callback).forPath(path));
        if (ZooKeeperRequests.failedWith(read, Code.NONODE)) {
            return null;
        }
        requests.check(read, what);
        return new Found(StoredRecord.decode(read.getData(), path), read.getStat());
    }

    /**
     * @return whether the record lives by the ensemble's clock: its node was last written less than
     *     its expiry length before now. A record kept for ever needs no clock.
     */
    private boolean live(String dir, Found found, String what) {
        long expiry = found.stored().expiryMillis();
        if (expiry < 0) {
            return true;
        }
        // "now" is read after the record, so it is never earlier than the moment the record was seen
        CuratorEvent ticked = requests.send(
                what + " (reading the ensemble's clock)",
                callback -> client.setData().inBackground(callback).forPath(dir, new byte[0]));
        if (ZooKeeperRequests.failedWith(ticked, Code.NONODE)) {
            return false;
        }
        requests.check(ticked, what);
        return ticked.getStat().getMtime() - found.stat().getMtime() < expiry;
    }

    private CuratorEvent ownerWrite(String what, String path, Found found, byte[] data) {
        return multi(
                what,
                () -> List.of(
                        op().check()
                                .forPath(ownerTokenChild(path, found.stored().token())),
                        op().setData().withVersion(found.stat().getVersion()).forPath(path, data)));
    }

    private CuratorEvent delete(String what, String path, Found found) {
        return multi(
                what,
                () -> List.of(
                        op().delete()
                                .forPath(ownerTokenChild(path, found.stored().token())),
                        op().delete().withVersion(found.stat().getVersion()).forPath(path)));
    }

    private void createDirectory(String dir, String what) {
        CuratorEvent created = requests.send(
                what,
                callback -> client.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.CONTAINER)
                        .inBackground(callback)
                        .forPath(dir));
        if (!ZooKeeperRequests.failedWith(created, Code.NODEEXISTS)) {
            requests.check(created, what);
        }
    }

    /** @return whether a guarded write failed because the record changed (or went) since it was read */
    private static boolean changedMeanwhile(CuratorEvent event) {
        return ZooKeeperRequests.failedWith(event, Code.BADVERSION)
                || ZooKeeperRequests.failedWith(event, Code.NONODE)
                || ZooKeeperRequests.failedWith(event, Code.NODEEXISTS)
                || ZooKeeperRequests.failedWith(event, Code.NOTEMPTY);
    }

    private TransactionOp op() {
        return client.transactionOp();
    }

    /** The operations of one multi, built when it is sent (building them may throw). */
    @FunctionalInterface
    private interface Operations {
        List<CuratorOp> build() throws Exception;
    }

    /** Sends operations that succeed or fail together. */
    private CuratorEvent multi(String what, Operations operations) {
        return requests.send(
                what, callback -> client.transaction().inBackground(callback).forOperations(operations.build()));
    }
}
