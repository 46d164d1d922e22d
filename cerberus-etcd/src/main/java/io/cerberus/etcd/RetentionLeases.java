package io.cerberus.etcd;

import io.etcd.jetcd.Lease;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The etcd leases that keep completed idempotency records for their retention, shared between
 * completions with the same retention so a completion costs one round trip most of the time.
 *
 * <p>A lease for retention R is granted with a TTL of R (rounded up to whole seconds) plus a
 * slack of max(1 s, R/100), and serves later completions with the same retention while its
 * remaining TTL is at least R. The remaining TTL is counted on this client's clock from before the
 * grant was sent, so it is never more than what the server counts: a record on a shared lease
 * lives at least its retention and at most the retention plus the slack and a second.
 */
final class RetentionLeases {
    /** etcd's largest lease TTL ({@code MaxLeaseTTL}), in seconds. */
    static final long MAX_TTL_SECONDS = 9_000_000_000L;
    /** The longest retention whose TTL, with its slack, is still a lease etcd grants. */
    static final Duration MAX_RETENTION = Duration.ofSeconds(MAX_TTL_SECONDS * 100 / 101);

    private static final int MAX_CACHED = 64;

    private record Granted(long id, long grantedAtNanos, long ttlSeconds) {
        long remainingNanos(long now) {
            return grantedAtNanos + TimeUnit.SECONDS.toNanos(ttlSeconds) - now;
        }
    }

    private final Lease leases;
    private final EtcdRequests requests;
    private final Map<Duration, Granted> byRetention = new ConcurrentHashMap<>();

    RetentionLeases(Lease leases, EtcdRequests requests) {
        this.leases = leases;
        this.requests = requests;
    }

    /**
     * @param retention how long a record must live
     * @return a live lease that ends between the retention and the retention plus its slack from now
     * @throws IllegalArgumentException if the retention is longer than etcd's longest lease
     */
    long leaseFor(Duration retention) {
        long now = System.nanoTime();
        Granted cached = byRetention.get(retention);
        if (cached != null && cached.remainingNanos(now) >= retention.toNanos()) {
            return cached.id();
        }
        long seconds = ttlSeconds(retention);
        long sentAt = System.nanoTime();
        // a resent grant may leave an unused lease behind; it ends by itself after the TTL
        long granted = requests.call("grant a retention lease", () -> leases.grant(seconds))
                .getID();
        if (byRetention.size() >= MAX_CACHED) {
            byRetention.values().removeIf(lease -> lease.remainingNanos(sentAt) <= 0);
        }
        if (byRetention.size() < MAX_CACHED || byRetention.containsKey(retention)) {
            byRetention.put(retention, new Granted(granted, sentAt, seconds));
        }
        return granted;
    }

    /** Stops handing out a lease etcd said is gone (revoked from outside). */
    void forget(long leaseId) {
        byRetention.values().removeIf(lease -> lease.id() == leaseId);
    }

    /**
     * @return the TTL granted for a retention: the retention in whole seconds, rounded up, plus the slack
     * @throws IllegalArgumentException if that is longer than etcd's longest lease
     */
    static long ttlSeconds(Duration retention) {
        long seconds = retention.getSeconds() + (retention.getNano() > 0 ? 1 : 0);
        long ttl = seconds + Math.max(1, seconds / 100);
        if (seconds > MAX_TTL_SECONDS || ttl > MAX_TTL_SECONDS) {
            throw new IllegalArgumentException("an etcd idempotency retention must be at most "
                    + MAX_TTL_SECONDS * 100 / 101 + " s (etcd's longest lease is " + MAX_TTL_SECONDS + " s), was "
                    + retention + "; use null to keep a result for ever");
        }
        return ttl;
    }
}
