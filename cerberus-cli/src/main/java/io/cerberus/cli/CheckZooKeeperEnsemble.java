package io.cerberus.cli;

import io.cerberus.servers.FreePorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * {@code check --server zk}: a 3-server ZooKeeper ensemble on loopback ports, each server a child
 * JVM running {@link QuorumPeerMain} from this program's own class path (the zookeeper jar the
 * engine's client comes in holds the server too). Its data is fsynced as in production; ticks are
 * 100 ms so that sessions as short as the clients' lease are allowed. The clients' session timeout
 * is the lease: a holder paused or cut off for longer loses its session and its lock.
 *
 * <p>The leader is found with the four-letter word {@code srvr} ({@code Mode: leader}); a
 * restarted server has rejoined when {@code srvr} answers {@code Mode: follower} or {@code leader}
 * (a server without quorum answers that it is not serving).
 */
final class CheckZooKeeperEnsemble extends EnsembleServers {
    private static final int SIZE = 3;
    private static final Duration START = Duration.ofSeconds(60);

    private final List<ServerProcess> members;
    private final Path dir;
    private final Duration session;
    private int next;
    private int killed = -1;

    private CheckZooKeeperEnsemble(List<ServerProcess> members, Path dir, Duration session) {
        this.members = members;
        this.dir = dir;
        this.session = session;
    }

    static CheckZooKeeperEnsemble start(Path dir, Duration session) throws IOException, InterruptedException {
        int[] clientPorts = new int[SIZE];
        List<String> peers = new ArrayList<>();
        for (int i = 0; i < SIZE; i++) {
            clientPorts[i] = FreePorts.next();
            peers.add("server." + (i + 1) + "=127.0.0.1:" + FreePorts.next() + ":" + FreePorts.next());
        }
        List<ServerProcess> members = new ArrayList<>();
        CheckZooKeeperEnsemble ensemble = new CheckZooKeeperEnsemble(members, dir, session);
        try {
            for (int i = 0; i < SIZE; i++) {
                Path memberDir = Files.createDirectories(dir.resolve("zk" + (i + 1)));
                Path data = Files.createDirectories(memberDir.resolve("data"));
                Files.writeString(data.resolve("myid"), Integer.toString(i + 1));
                List<String> config = new ArrayList<>(List.of("tickTime=100", "initLimit=100", "syncLimit=20",
                        "minSessionTimeout=100", "maxSessionTimeout=60000", "dataDir=" + data,
                        "clientPort=" + clientPorts[i], "clientPortAddress=127.0.0.1",
                        "admin.enableServer=false", "4lw.commands.whitelist=srvr"));
                config.addAll(peers);
                Path configFile = memberDir.resolve("zoo.cfg");
                Files.writeString(configFile, String.join("\n", config) + "\n");
                List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                        "-cp", System.getProperty("java.class.path"), QuorumPeerMain.class.getName(), configFile.toString());
                ServerProcess member = new ServerProcess("zookeeper server " + (i + 1), command, memberDir.resolve("server.out"),
                        clientPorts[i]);
                members.add(member);
                member.start();
            }
            for (ServerProcess member : members) {
                member.await("serving in the ensemble", START, () -> mode(member).matches("leader|follower"));
            }
            return ensemble;
        } catch (IOException | InterruptedException | RuntimeException e) {
            ensemble.close();
            throw e;
        }
    }

    @Override
    public String uri() {
        return "zk://" + members.stream().map(m -> "127.0.0.1:" + m.clientPort()).collect(Collectors.joining(","))
                + "/cerberus-check?sessionTimeout=" + session.toMillis() + "ms";
    }

    /** {@code leader-kill}: the server that says it leads; {@code server-kill}: the next one in turn, leader or not. */
    @Override
    String kill(String fault) throws InterruptedException {
        int index = switch (fault) {
            case "leader-kill" -> leader();
            case "server-kill" -> next++ % SIZE;
            default -> throw new IllegalArgumentException("--server zk does not take fault " + fault);
        };
        String role = mode(members.get(index));
        members.get(index).kill();
        killed = index;
        return "server " + (index + 1) + " (" + (role.isEmpty() ? "not serving" : role) + ")";
    }

    @Override
    String restart() throws InterruptedException {
        ServerProcess member = members.get(killed);
        member.start();
        member.await("rejoining the ensemble", START, () -> mode(member).matches("leader|follower"));
        int leader = leader();
        return "server " + (killed + 1) + " rejoined as " + mode(member) + ", leader server " + (leader + 1);
    }

    /** @return the index of the server that says it leads, waiting up to a minute for an election to end */
    private int leader() throws InterruptedException {
        long deadline = System.nanoTime() + START.toNanos();
        while (true) {
            for (int i = 0; i < SIZE; i++) {
                if (members.get(i).alive() && mode(members.get(i)).equals("leader")) {
                    return i;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no ZooKeeper server says it leads after " + Durations.format(START)
                        + "; see the servers' output in " + dir);
            }
            Thread.sleep(20);
        }
    }

    /** @return the {@code Mode:} that {@code srvr} gives (leader, follower, standalone), empty when the server does not serve */
    private static String mode(ServerProcess member) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", member.clientPort()), 1_000);
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            return answer.lines().filter(line -> line.startsWith("Mode:")).map(line -> line.substring(5).strip()).findFirst().orElse("");
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        members.forEach(ServerProcess::close);
    }
}
