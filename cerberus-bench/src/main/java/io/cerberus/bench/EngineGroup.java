package io.cerberus.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The server of one engine in a run and the peers that take turns on it; its tables compare every
 * peer with the group's main peer.
 *
 * @param engine the name in {@code --engines}: redis, zk, etcd, postgres, mariadb
 * @param title the engine in headings
 * @param server the server and its version, for the report
 * @param baseline the report name of the peer the ratio column divides by
 * @param baselineShort that peer in the column's heading ("vs Redisson")
 * @param requestsColumn the heading of the server-work column
 * @param requests the server's count of work done so far (its own reads not counted), or null when not counted
 * @param lockPeers the peers of the lock workloads by option name, in report order
 * @param guardPeers the peers of the idempotency workloads (empty where the engine has none in the bench)
 * @param sharedPeers the lock peers that a second JVM can build against the same server, by option name: those of
 *     {@code lockPeers} that are distributed locks (not the floors), for {@code contended-2p}
 * @param holders the peers of the held-locks workload, made with the lease under test
 * @param residue what the server tells of what a cell leaves behind, or null when the bench cannot ask
 * @param semaphores the peers of the semaphore workloads ({@link Semaphores#NONE} where the engine has none in the bench)
 * @param stop stops the server (and closes the bench's own connections to it)
 */
record EngineGroup(
        String engine,
        String title,
        String server,
        String baseline,
        String baselineShort,
        String requestsColumn,
        LongSupplier requests,
        Map<String, Supplier<Peer>> lockPeers,
        Map<String, Supplier<Peer>> guardPeers,
        Map<String, PeerSpec> sharedPeers,
        Map<String, HeldLocks.Holder> holders,
        Residue residue,
        Semaphores semaphores,
        Runnable stop)
        implements AutoCloseable {

    /**
     * What the server can count of what is left in it: objects (keys, nodes, rows) and bytes.
     *
     * @param objects what {@code count} counts, for column headings ("keys", "znodes", "rows")
     * @param count the objects in the server now
     * @param memory what {@code bytes} measures, for column headings ("used_memory")
     * @param bytes the bytes now
     * @param settle how long the count must stay the same before it is read: a server that removes
     *     what is left in a sweep of its own (ZooKeeper's containers) is read once the sweep is done
     */
    record Residue(String objects, LongSupplier count, String memory, LongSupplier bytes, Duration settle) {
        /** The longest {@link #settledCount} waits. */
        static final Duration MOST_SETTLING = Duration.ofSeconds(60);

        Residue(String objects, LongSupplier count, String memory, LongSupplier bytes) {
            this(objects, count, memory, bytes, Duration.ZERO);
        }

        /** @return the count once it stayed the same for {@link #settle} (or after {@link #MOST_SETTLING}) */
        long settledCount() {
            long last = count.getAsLong();
            if (settle.isZero()) {
                return last;
            }
            long giveUpAt = System.nanoTime() + MOST_SETTLING.toNanos();
            long sameSince = System.nanoTime();
            while (System.nanoTime() - sameSince < settle.toNanos() && System.nanoTime() < giveUpAt) {
                LockSupport.parkNanos(settle.toNanos() / 10);
                long now = count.getAsLong();
                if (now != last) {
                    last = now;
                    sameSince = System.nanoTime();
                }
            }
            return last;
        }
    }

    /**
     * The peers of the semaphore workloads and the one their ratios divide by.
     *
     * @param baseline the report name of that peer
     * @param baselineShort that peer in the ratio column's heading ("vs Redisson PES")
     * @param peers by option name, in report order: each made for a semaphore of the permits given
     */
    record Semaphores(String baseline, String baselineShort, Map<String, IntFunction<Peer>> peers) {
        /** An engine without semaphore peers in the bench. */
        static final Semaphores NONE = new Semaphores("", "", Map.of());
    }

    @Override
    public void close() {
        stop.run();
    }
}
