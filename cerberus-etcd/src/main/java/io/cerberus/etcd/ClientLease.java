package io.cerberus.etcd;

import io.cerberus.EngineUnavailableException;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one etcd lease of a client, to which every lock key of the client is attached. Kept alive
 * by a keep-alive request every third of the TTL, each one checked: a reply with TTL 0 or "lease
 * not found" means the lease expired or was revoked; no confirmed keep-alive for a whole TTL
 * means it must be taken as expired. Either way the lease is reported lost (with every hold on
 * it) and the next acquisition grants a new one. A single keep-alive request per round, not the
 * jetcd keep-alive stream, so a broken stream can never be mistaken for a live lease.
 *
 * <p><b>Invariant.</b> A lease is used only within its granted TTL of the send time of its last
 * confirmed keep-alive (or of its grant): the server received that request after it was sent, and
 * keeps the lease at least that TTL after receiving it. A watch on its own thread declares the lease lost
 * at that deadline, even while a keep-alive hangs (a partition answers nothing until the request
 * timeout, which may be far longer than the TTL); {@link #current()} and {@link #isLive} check
 * the deadline too, so a late watch cannot let an acquisition use an expired lease.
 *
 * <p>A keep-alive unanswered after a sixth of the TTL is sent again, on a new stream. jetcd's
 * one-shot keep-alive now and then never delivers its reply, although the reply reaches the
 * client (seen under load in the bench: the frame arrives, the future never completes); with
 * only the general resend, after a quarter of the request timeout, a short TTL ran out first.
 */
final class ClientLease {
    private static final System.Logger LOG = System.getLogger(ClientLease.class.getName());

    /** Told when a lease is lost: its id and why. */
    interface LossListener {
        void leaseLost(long leaseId, String reason);
    }

    private final Lease leases;
    private final EtcdRequests requests;
    private final Duration ttl;
    private final Duration resendAfter;
    private final LossListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    /** Written under {@link #lock}; read without it by {@link #current()} once granted (every acquire asks). */
    private volatile long leaseId;
    /** When the last confirmed keep-alive of {@link #leaseId} (or its grant) was sent; written under {@link #lock}. */
    private volatile long confirmedAtNanos;
    /** Where the deadline of each lease is watched; null until {@link #keepAliveOn}. */
    private volatile ScheduledExecutorService watches;
    /** The TTL the server granted the last lease, in seconds; 0 before the first grant. */
    private volatile long grantedSeconds;
    /** The same TTL in nanoseconds: how long after {@link #confirmedAtNanos} the lease may be used. */
    private volatile long grantedNanos;
    /** Whether the server was found to grant longer leases than asked (said once per client). */
    private boolean warnedLonger;
    /** Set when the engine closes: a keep-alive cut short by the closing channel is no news. */
    private volatile boolean stopped;

    ClientLease(Lease leases, EtcdRequests requests, Duration ttl, LossListener listener) {
        this.leases = leases;
        this.requests = requests;
        this.ttl = ttl;
        this.listener = listener;
        this.resendAfter = ttl.dividedBy(6);
    }

    Duration ttl() {
        return ttl;
    }

    /**
     * @return the TTL the server granted (it raises one below its minimum), or the TTL asked
     *     before the first grant: how long the keys of a client that falls silent live on
     */
    Duration grantedTtl() {
        long granted = grantedSeconds;
        return granted > 0 ? Duration.ofSeconds(granted) : ttl;
    }

    /**
     * Starts the keep-alive rounds, and the watch of each lease's deadline, on {@code scheduler}.
     *
     * @param scheduler at least two threads: a keep-alive may hang until its timeout, and the
     *     watch must not wait for it
     */
    void keepAliveOn(ScheduledExecutorService scheduler) {
        long every = Math.max(1, ttl.toMillis() / 3);
        watches = scheduler;
        scheduler.scheduleWithFixedDelay(this::keepAliveOnce, every, every, TimeUnit.MILLISECONDS);
        watch(currentOrZero());
    }

    /** Stops reporting keep-alive failures: the engine is closing, and its channel with it. */
    void stop() {
        stopped = true;
    }

    /**
     * @return the live lease id, granting a lease first if there is none
     * @throws EngineUnavailableException if no lease could be granted within the timeout
     */
    long current() {
        long known = leaseId;
        if (known != 0) {
            if (System.nanoTime() - confirmedAtNanos < grantedNanos) {
                return known;
            }
            lost(known, unanswered(known));
        }
        long granted;
        lock.lock();
        try {
            if (leaseId != 0) {
                return leaseId;
            }
            long sentAt = System.nanoTime();
            // a resent grant may leave an unused lease behind; it ends by itself after the TTL
            LeaseGrantResponse grant = requests.call("grant a lease", () -> leases.grant(ttl.toSeconds()));
            grantedSeconds = grant.getTTL();
            grantedNanos = TimeUnit.SECONDS.toNanos(Math.max(1, grant.getTTL()));
            confirmedAtNanos = sentAt;
            granted = grant.getID();
            leaseId = granted; // last: the lock-free read at this method's start sees the new lease's deadline with it
            if (grant.getTTL() > ttl.toSeconds() && !warnedLonger) {
                warnedLonger = true;
                LOG.log(
                        Level.WARNING,
                        "etcd " + requests.describe() + " granted a lease of " + grant.getTTL() + " s where "
                                + ttl.toSeconds()
                                + " s was asked (etcd raises TTLs below its minimum, 1.5 election timeouts): a client"
                                + " that stops answering keeps its locks for up to " + grant.getTTL() + " s");
            }
            LOG.log(Level.DEBUG, "granted etcd lease {0} of {1} s", Long.toHexString(granted), ttl.toSeconds());
        } finally {
            lock.unlock();
        }
        // a grant answered after its own deadline is declared lost here; the acquire that sends it is then refused or
        // dropped
        watch(granted);
        return granted;
    }

    /**
     * @param id a lease an acquisition was sent on
     * @return whether it is still the client's lease and before its deadline (its granted TTL
     *     after its last confirmed keep-alive was sent); a lease found past it is declared lost here
     */
    boolean isLive(long id) {
        if (leaseId != id) {
            return false;
        }
        if (System.nanoTime() - confirmedAtNanos < grantedNanos) {
            return true;
        }
        lost(id, unanswered(id));
        return false;
    }

    /** Declares {@code id} lost at its deadline unless a keep-alive is confirmed before; then watches the new deadline. */
    private void watch(long id) {
        ScheduledExecutorService scheduler = watches;
        if (id == 0 || scheduler == null || stopped) {
            return;
        }
        long left;
        lock.lock();
        try {
            if (leaseId != id) {
                return;
            }
            left = confirmedAtNanos + grantedNanos - System.nanoTime();
        } finally {
            lock.unlock();
        }
        if (left <= 0) {
            lost(id, unanswered(id));
            return;
        }
        try {
            scheduler.schedule(() -> watch(id), left, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the engine is closing
        }
    }

    private String unanswered(long id) {
        return "no keep-alive of its etcd lease " + Long.toHexString(id) + " was answered for the lease's "
                + grantedSeconds + " s";
    }

    private void keepAliveOnce() {
        long id = currentOrZero();
        if (id == 0 || stopped) {
            return;
        }
        long sentAt = System.nanoTime();
        try {
            LeaseKeepAliveResponse reply =
                    requests.callKeeping("keep its lease alive", () -> leases.keepAliveOnce(id), resendAfter);
            LOG.log(
                    Level.TRACE,
                    "keep-alive of lease {0} answered in {1} ms, TTL {2}",
                    Long.toHexString(id),
                    (System.nanoTime() - sentAt) / 1_000_000,
                    reply.getTTL());
            if (reply.getTTL() <= 0) {
                lost(id, "its etcd lease " + Long.toHexString(id) + " expired or was revoked");
            } else {
                confirmed(id, sentAt);
            }
        } catch (EtcdRefusedException e) {
            if (e.isLeaseGone()) {
                lost(id, "its etcd lease " + Long.toHexString(id) + " expired or was revoked");
            } else {
                LOG.log(Level.WARNING, "etcd refused a keep-alive of the client lease: {0}", e.getMessage());
                isLive(id); // past its deadline, the lease is declared lost there
            }
        } catch (EngineUnavailableException e) {
            if (stopped) {
                return;
            }
            LOG.log(Level.WARNING, "no keep-alive of the client lease: {0}", e.getMessage());
            isLive(id); // past its deadline, the lease is declared lost there
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "keep-alive of the client lease failed", e);
            isLive(id); // past its deadline, the lease is declared lost there
        }
    }

    private long currentOrZero() {
        lock.lock();
        try {
            return leaseId;
        } finally {
            lock.unlock();
        }
    }

    private void confirmed(long id, long sentAt) {
        lock.lock();
        try {
            if (leaseId == id) {
                confirmedAtNanos = Math.max(confirmedAtNanos, sentAt);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Forgets a lease known to be gone and tells the listener, once per lease.
     *
     * @param id the lease
     * @param reason why it is gone
     */
    void lost(long id, String reason) {
        lock.lock();
        try {
            if (leaseId != id) {
                return;
            }
            leaseId = 0;
        } finally {
            lock.unlock();
        }
        LOG.log(Level.WARNING, "etcd lease {0} lost: {1}", Long.toHexString(id), reason);
        listener.leaseLost(id, reason);
    }

    /** Revokes the lease, deleting every key on it at once; best effort. */
    void revoke() {
        long id = currentOrZero();
        if (id == 0) {
            return;
        }
        try {
            requests.call("revoke its lease", () -> leases.revoke(id));
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "could not revoke etcd lease {0}; its keys go when it expires: {1}",
                    Long.toHexString(id),
                    e.getMessage());
        }
    }
}
