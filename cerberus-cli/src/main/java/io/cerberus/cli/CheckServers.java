package io.cerberus.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The lock servers the safety checker runs itself: one {@code redis-server} ({@code --server
 * redis}) or five independent ones for Redlock ({@code --server redlock}). Faults kill some of them
 * and start them again, each time the next ones in turn.
 */
final class CheckServers implements LockServer {
    private final String kind;
    private final List<CheckServer> servers;
    private int next;

    private CheckServers(String kind, List<CheckServer> servers) {
        this.kind = kind;
        this.servers = servers;
    }

    static CheckServers start(String kind, Path dir, boolean persistent) throws IOException, InterruptedException {
        int count = kind.equals("redlock") ? 5 : 1;
        List<CheckServer> servers = new ArrayList<>();
        try {
            for (int i = 1; i <= count; i++) {
                servers.add(CheckServer.startRedis(count == 1 ? dir : dir.resolve("node" + i), persistent));
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            servers.forEach(CheckServer::close);
            throw e;
        }
        return new CheckServers(kind, servers);
    }

    @Override
    public String uri() {
        if (kind.equals("redlock")) {
            return "redlock://" + servers.stream().map(CheckServer::hostPort).collect(Collectors.joining(","));
        }
        return servers.get(0).uri();
    }

    /** {@code server-kill}: the one server, or a minority of Redlock's; {@code majority-kill}: a majority of Redlock's. */
    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws IOException, InterruptedException {
        int count = fault.equals("majority-kill") ? servers.size() / 2 + 1 : Math.max(1, (servers.size() - 1) / 2);
        record.accept(fault);
        List<Integer> nodes = killAndRestart(count, down);
        record.accept("server-restart" + (servers.size() > 1 ? " nodes " + nodes : ""));
        record.accept("confirmed " + fault + ": " + (nodes.size() == 1 ? "node " + nodes.get(0) : "nodes " + nodes)
                + " exited of SIGKILL with the port closed, then accepted connections again");
    }

    /**
     * Kills {@code count} servers with SIGKILL (confirmed: exited, port closed), keeps them down, and
     * starts them again (confirmed: port accepting).
     *
     * @return which nodes (1-based) were killed
     */
    private List<Integer> killAndRestart(int count, Duration down) throws IOException, InterruptedException {
        List<Integer> killed = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int index = next++ % servers.size();
            servers.get(index).kill();
            killed.add(index + 1);
        }
        Thread.sleep(down.toMillis());
        for (int node : killed) {
            servers.get(node - 1).restart();
        }
        return killed;
    }

    @Override
    public void close() {
        servers.forEach(CheckServer::close);
    }
}
