package io.cerberus.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/** The ZooKeeper peers of Cerberus's {@code zk://}, each with its own client of the same server. */
final class ZooKeeperPeers {
    /** The peer the ZooKeeper tables are compared with. */
    static final String CURATOR = "Curator InterProcessMutex";

    private ZooKeeperPeers() {}

    /** @return a started Curator client with a 60 s session, connected */
    static CuratorFramework connect(String connectString) {
        return connect(connectString, Duration.ofSeconds(60));
    }

    private static CuratorFramework connect(String connectString, Duration sessionTimeout) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                connectString, (int) sessionTimeout.toMillis(), 15_000, new ExponentialBackoffRetry(100, 5));
        client.start();
        try {
            client.blockUntilConnected();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new IllegalStateException("interrupted connecting to ZooKeeper", e);
        }
        return client;
    }

    /** Curator's {@code InterProcessMutex}: one per name, shared by the threads (it is reentrant per thread). */
    static Peer curator(String connectString) {
        return curator(connectString, Duration.ofSeconds(60));
    }

    /**
     * Curator's {@code InterProcessMutex} on a client of this session timeout (the server raises
     * it to at least two ticks): holds live with the session, no lock is renewed.
     */
    static Peer curator(String connectString, Duration sessionTimeout) {
        CuratorFramework client = connect(connectString, sessionTimeout);
        Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return CURATOR;
            }

            @Override
            public Held lock(String name) {
                InterProcessMutex mutex =
                        mutexes.computeIfAbsent(name, n -> new InterProcessMutex(client, "/bench-curator/" + n));
                try {
                    mutex.acquire();
                } catch (Exception e) {
                    throw new IllegalStateException("Curator could not acquire " + name, e);
                }
                return () -> {
                    try {
                        mutex.release();
                    } catch (Exception e) {
                        throw new IllegalStateException("Curator could not release " + name, e);
                    }
                };
            }

            @Override
            public boolean isLocked(String name) {
                // the mutex's lock nodes are the children of its path: any child is a holder or a waiter
                try {
                    return !client.getChildren()
                            .forPath("/bench-curator/" + name)
                            .isEmpty();
                } catch (KeeperException.NoNodeException e) {
                    return false;
                } catch (Exception e) {
                    throw new IllegalStateException("Curator could not list the nodes of " + name, e);
                }
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /** Two {@code exists} of the root on one ZooKeeper client: no lock that takes and frees a node can beat it. */
    static Peer roundTripFloor(String connectString) {
        CuratorFramework client = connect(connectString);
        return new Peer() {
            @Override
            public String name() {
                return "2 round trips (exists, exists)";
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                exists();
                return () -> {
                    try {
                        exists();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                };
            }

            private void exists() throws InterruptedException {
                try {
                    ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
                    zooKeeper.exists("/", false);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("exists failed", e);
                }
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
