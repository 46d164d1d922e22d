package io.cerberus.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Lock;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** The etcd peers of Cerberus's {@code etcd://}, each with its own jetcd client of the same server. */
final class EtcdPeers {
    /** jetcd keeps a lease alive on its own stream; the peers take no action on its replies. */
    private static final StreamObserver<LeaseKeepAliveResponse> KEEP_ALIVES_UNWATCHED = new StreamObserver<>() {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    };

    /** The peer the etcd tables are compared with. */
    static final String JETCD_LOCK = "jetcd Lock";

    private static final long LEASE_SECONDS = 10;

    private EtcdPeers() {}

    private static <T> T await(Future<T> future, String what) throws InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(what + " failed", e.getCause());
        }
    }

    /** Takes {@code name} through etcd's lock service on {@code lease}; the hold unlocks the key the service made. */
    private static Peer.Held lockWith(Lock locks, String name, long lease) throws InterruptedException {
        ByteSequence key = await(
                        locks.lock(ByteSequence.from("bench-jetcd/" + name, StandardCharsets.UTF_8), lease),
                        "lock " + name)
                .getKey();
        return () -> {
            try {
                await(locks.unlock(key), "unlock " + name);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        };
    }

    /**
     * jetcd's {@code Lock} client: etcd's lock service, {@code lock(name, lease)} then
     * {@code unlock(key)}. Each worker thread has its own lease, granted at its first lock and kept
     * alive until the peer closes: the service names the lock's key after the lease, so threads
     * sharing one lease would share one key and all "hold" the lock at once. Leases are kept by
     * worker name, so the measured cell reuses the ones its warm-up granted.
     */
    static Peer jetcdLock(String endpoint) {
        Client client = Client.builder().endpoints(endpoint).build();
        Lock locks = client.getLockClient();
        Lease leases = client.getLeaseClient();
        List<CloseableClient> keepAlives = new CopyOnWriteArrayList<>();
        Map<String, Long> workerLeases = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return JETCD_LOCK;
            }

            private synchronized long lease() throws InterruptedException {
                Long lease = workerLeases.get(Thread.currentThread().getName());
                if (lease == null) {
                    lease = await(leases.grant(LEASE_SECONDS), "lease grant").getID();
                    keepAlives.add(leases.keepAlive(lease, KEEP_ALIVES_UNWATCHED));
                    workerLeases.put(Thread.currentThread().getName(), lease);
                }
                return lease;
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                return lockWith(locks, name, lease());
            }

            @Override
            public void close() {
                keepAlives.forEach(CloseableClient::close);
                client.close();
            }
        };
    }

    /** Two {@code get}s of one key on one jetcd client: no lock that puts and deletes a key can beat it. */
    static Peer roundTripFloor(String endpoint) {
        Client client = Client.builder().endpoints(endpoint).build();
        KV kv = client.getKVClient();
        ByteSequence key = ByteSequence.from("bench-floor", StandardCharsets.UTF_8);
        return new Peer() {
            @Override
            public String name() {
                return "2 round trips (get, get)";
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                await(kv.get(key), "get");
                return () -> {
                    try {
                        await(kv.get(key), "get");
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                };
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /**
     * jetcd's {@code Lock} client for holding many locks: every lock on one lease of this TTL
     * (whole seconds, at least one), granted once and kept alive by jetcd every TTL/3 — the keep-alive
     * is the renewal of every hold at once. The service keys a lock {@code name/<lease>}, so distinct
     * names on one lease are distinct locks.
     */
    static Peer jetcdLockOnOneLease(String endpoint, Duration ttl) {
        Client client = Client.builder().endpoints(endpoint).build();
        Lock locks = client.getLockClient();
        KV kv = client.getKVClient();
        long lease;
        try {
            lease = await(client.getLeaseClient().grant(Math.max(1, (ttl.toMillis() + 999) / 1000)), "lease grant")
                    .getID();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new IllegalStateException("interrupted granting a lease", e);
        }
        CloseableClient keepAlive = client.getLeaseClient().keepAlive(lease, KEEP_ALIVES_UNWATCHED);
        return new Peer() {
            @Override
            public String name() {
                return JETCD_LOCK;
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                return lockWith(locks, name, lease);
            }

            @Override
            public boolean isLocked(String name) throws InterruptedException {
                ByteSequence prefix = ByteSequence.from("bench-jetcd/" + name + "/", StandardCharsets.UTF_8);
                return await(
                                        kv.get(
                                                prefix,
                                                GetOption.builder()
                                                        .isPrefix(true)
                                                        .withCountOnly(true)
                                                        .build()),
                                        "get " + name)
                                .getCount()
                        > 0;
            }

            @Override
            public void close() {
                keepAlive.close();
                client.close();
            }
        };
    }
}
