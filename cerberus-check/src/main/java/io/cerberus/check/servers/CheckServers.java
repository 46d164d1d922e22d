package io.cerberus.check.servers;

import io.cerberus.servers.Deployment;
import io.cerberus.servers.Executables;
import io.cerberus.servers.RedisGroup;
import io.cerberus.servers.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The lock servers the safety checker runs itself: one {@link RedisServer} ({@code --server
 * redis}, its data and {@code server.out} in the run's server directory) or five independent ones
 * for Redlock ({@code --server redlock}, a {@link RedisGroup}, node N in {@code nodeN}). Faults kill
 * some of them and start them again, each time the next ones in turn.
 */
final class CheckServers implements LockServer {
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private final Deployment deployment;
    private final List<RedisServer> servers;
    private int next;

    private CheckServers(Deployment deployment, List<RedisServer> servers) {
        this.deployment = deployment;
        this.servers = servers;
    }

    /**
     * @param kind {@code redis} or {@code redlock}
     * @param dir the run's directory for the servers' data and output
     * @param persistent whether each keeps an append-only file, fsynced on every write
     * @return the running servers
     * @throws IllegalArgumentException if redis-server is not installed
     * @throws IOException if the directory cannot be made
     */
    static CheckServers start(String kind, Path dir, boolean persistent) throws IOException {
        if (Executables.find("redis-server").isEmpty()) {
            throw new IllegalArgumentException(
                    "--server " + kind + " needs redis-server; install it with: apt-get install redis-server");
        }
        RedisServer.Persistence persistence =
                persistent ? RedisServer.Persistence.AOF_ALWAYS : RedisServer.Persistence.NONE;
        if (kind.equals("redlock")) {
            RedisGroup group = RedisGroup.builder()
                    .count(5)
                    .dir(dir)
                    .persistence(persistence)
                    .startTimeout(WITHIN)
                    .start();
            return new CheckServers(group, group.nodes());
        }
        RedisServer server = RedisServer.builder()
                .dir(Files.createDirectories(dir))
                .output(dir.resolve("server.out"))
                .persistence(persistence)
                .startTimeout(WITHIN)
                .start();
        return new CheckServers(server, List.of(server));
    }

    @Override
    public String uri() {
        return deployment.uri();
    }

    @Override
    public Optional<String> registerStore(String store) {
        return store.equals("redis") && servers.size() == 1
                ? Optional.of(servers.get(0).uri())
                : Optional.empty();
    }

    /** {@code server-kill}: the one server, or a minority of Redlock's; {@code majority-kill}: a majority of Redlock's. */
    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        int count = fault.equals("majority-kill") ? servers.size() / 2 + 1 : Math.max(1, (servers.size() - 1) / 2);
        record.accept(fault);
        List<Integer> nodes = killAndRestart(count, down);
        record.accept("server-restart" + (servers.size() > 1 ? " nodes " + nodes : ""));
        record.accept("confirmed " + fault + ": " + (nodes.size() == 1 ? "node " + nodes.get(0) : "nodes " + nodes)
                + " exited of SIGKILL with the port closed, then accepted connections again");
    }

    /**
     * Kills {@code count} servers with SIGKILL (confirmed: exited, port closed), keeps them down, and
     * starts them again (confirmed: answering PING, so accepting connections).
     *
     * @return which nodes (1-based) were killed
     */
    private List<Integer> killAndRestart(int count, Duration down) throws InterruptedException {
        List<Integer> killed = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int index = next++ % servers.size();
            servers.get(index).kill();
            killed.add(index + 1);
        }
        Thread.sleep(down.toMillis()); // --server-down is how long they stay down: a duration, not a wait for an event
        for (int node : killed) {
            servers.get(node - 1).restart();
        }
        return killed;
    }

    @Override
    public void close() {
        deployment.close();
    }
}
