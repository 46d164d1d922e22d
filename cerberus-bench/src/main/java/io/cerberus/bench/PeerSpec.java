package io.cerberus.bench;

import io.cerberus.CerberusBuilder;
import java.util.List;
import java.util.Map;

/**
 * How to build one lock peer of a server from strings alone, so that a second JVM
 * ({@link ContendedWorker}) builds the same peer against the same server as this one: the engine
 * groups make their distributed lock peers with {@link #build()}, and {@code contended-2p} hands
 * {@link #arguments()} and {@link #environment()} to the child. The floors are not here: they hold nothing another process
 * could contend for.
 *
 * @param engine the engine's {@code --engines} name
 * @param peer the peer's {@code --peers} name
 * @param address what the peer connects to: Cerberus's engine URI for {@code cerberus}; otherwise the
 *     peer's own address (Redis {@code host:port}, ZooKeeper connect string, etcd endpoint, JDBC URL)
 * @param poolSize the connections of a JDBC peer's pool (0 elsewhere)
 */
record PeerSpec(String engine, String peer, String address, int poolSize) {
    /** How many command-line arguments {@link #arguments()} gives. */
    static final int ARGUMENTS = 3;
    /**
     * The environment variable that carries the address to another JVM: a JDBC URL holds the
     * server's password, and a command line is shown to every user of the machine.
     */
    static final String ADDRESS_ENV = "CERBERUS_BENCH_PEER_ADDRESS";

    /** @return this spec as command-line arguments, all but the address, for {@link #parse} in another JVM */
    List<String> arguments() {
        return List.of(engine, peer, Integer.toString(poolSize));
    }

    /** @return the environment of another JVM that is to {@link #parse} this spec: the address */
    Map<String, String> environment() {
        return Map.of(ADDRESS_ENV, address);
    }

    /**
     * @param args the arguments of {@link #arguments()}, from {@code from} on
     * @param environment the environment, with the variables of {@link #environment()}
     * @throws IllegalArgumentException if fewer than {@link #ARGUMENTS} are left, or the address is missing
     */
    static PeerSpec parse(List<String> args, int from, Map<String, String> environment) {
        if (args.size() < from + ARGUMENTS) {
            throw new IllegalArgumentException(
                    "a peer is given as ENGINE PEER POOL_SIZE, got " + args.subList(from, args.size()));
        }
        String address = environment.get(ADDRESS_ENV);
        if (address == null) {
            throw new IllegalArgumentException(
                    "the peer's address is given in the environment variable " + ADDRESS_ENV + ", which is not set");
        }
        return new PeerSpec(args.get(from), args.get(from + 1), address, Integer.parseInt(args.get(from + 2)));
    }

    /**
     * Builds the peer: it connects at once.
     *
     * @throws IllegalArgumentException if the engine has no such distributed peer
     */
    Peer build() {
        if (peer.equals("cerberus")) {
            return Peers.cerberus(address);
        }
        return switch (engine + "/" + peer) {
            case "redis/redisson" -> Peers.redisson(host(), port());
            case "redis/redisson-fenced" -> Peers.redissonFenced(host(), port());
            case "redis/spring" -> Peers.springRedis(host(), port());
            case "zk/curator" -> ZooKeeperPeers.curator(address);
            case "etcd/jetcd" -> EtcdPeers.jetcdLock(address);
            case "postgres/session", "mariadb/session" ->
                Peers.cerberus(address, CerberusBuilder.DEFAULT_LEASE, "Cerberus session mode");
            case "postgres/datasource", "mariadb/datasource" -> JdbcPeers.cerberusOnPool(address, poolSize);
            case "postgres/spring", "mariadb/spring" -> JdbcPeers.springJdbc(address, poolSize);
            case "postgres/shedlock", "mariadb/shedlock" -> JdbcPeers.shedLock(address, poolSize);
            default -> throw new IllegalArgumentException("no distributed lock peer '" + peer + "' on " + engine);
        };
    }

    private String host() {
        return address.substring(0, address.lastIndexOf(':'));
    }

    private int port() {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }
}
