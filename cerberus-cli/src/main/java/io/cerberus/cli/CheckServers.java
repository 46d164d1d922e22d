package io.cerberus.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The lock servers the safety checker runs itself: one {@code redis-server} ({@code --server
 * redis}) or five independent ones for Redlock ({@code --server redlock}). Faults kill some of them
 * and start them again, each time the next ones in turn.
 */
final class CheckServers implements LockServers {
    private final String kind;
    private final List<CheckServer> servers;
    private int next;
    private List<Integer> killed = List.of();

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

    /** Kills the one server, a minority of Redlock's ({@code server-kill}) or a majority ({@code majority-kill}), the next ones in turn. */
    @Override
    public String kill(String fault) throws InterruptedException {
        int count = switch (fault) {
            case "server-kill" -> Math.max(1, (servers.size() - 1) / 2);
            case "majority-kill" -> servers.size() / 2 + 1;
            default -> throw new IllegalArgumentException("--server " + kind + " does not take fault " + fault);
        };
        List<Integer> nodes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int index = next++ % servers.size();
            servers.get(index).kill();
            nodes.add(index + 1);
        }
        killed = nodes;
        return describe(nodes);
    }

    @Override
    public String restart() throws IOException, InterruptedException {
        for (int node : killed) {
            servers.get(node - 1).restart();
        }
        return describe(killed);
    }

    private String describe(List<Integer> nodes) {
        return servers.size() > 1 ? "nodes " + nodes : "";
    }

    @Override
    public void close() {
        servers.forEach(CheckServer::close);
    }
}
