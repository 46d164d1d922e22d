package io.cerberus.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The lock servers the safety checker runs itself: one {@code redis-server} ({@code --server
 * redis}) or five independent ones for Redlock ({@code --server redlock}). Faults kill some of them
 * and start them again, each time the next ones in turn.
 */
final class CheckServers implements AutoCloseable {
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

    String uri() {
        if (kind.equals("redlock")) {
            return "redlock://" + servers.stream().map(CheckServer::hostPort).collect(Collectors.joining(","));
        }
        return servers.get(0).uri();
    }

    int size() {
        return servers.size();
    }

    /** @return how many servers a {@code server-kill} takes down: the one server, or a minority of Redlock's */
    int minority() {
        return (servers.size() - 1) / 2 == 0 ? 1 : (servers.size() - 1) / 2;
    }

    /**
     * Kills {@code count} servers with SIGKILL (confirmed: exited, port closed), keeps them down, and
     * starts them again (confirmed: port accepting).
     *
     * @return which nodes (1-based) were killed
     */
    List<Integer> killAndRestart(int count, Duration down) throws IOException, InterruptedException {
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
