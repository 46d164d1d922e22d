package io.cerberus.zookeeper;

import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/** Three real ZooKeeper servers forming one ensemble on loopback ports, each in its own child JVM. */
final class ZooKeeperEnsemble implements AutoCloseable {
    private final int[] clientPorts = new int[3];
    private final ManagedProcess[] servers = new ManagedProcess[3];

    private ZooKeeperEnsemble() {
    }

    static ZooKeeperEnsemble start() {
        ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble();
        try {
            Path dir = Files.createTempDirectory("cerberus-zk-ensemble-");
            List<String> peers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ensemble.clientPorts[i] = FreePorts.next();
                peers.add("server." + (i + 1) + "=127.0.0.1:" + FreePorts.next() + ":" + FreePorts.next());
            }
            for (int i = 0; i < 3; i++) {
                Path data = Files.createDirectories(dir.resolve("server" + (i + 1)));
                Files.writeString(data.resolve("myid"), Integer.toString(i + 1));
                Path config = dir.resolve("zoo" + (i + 1) + ".cfg");
                List<String> lines = new ArrayList<>(List.of("tickTime=200", "initLimit=50", "syncLimit=10",
                        "minSessionTimeout=400", "maxSessionTimeout=60000", "dataDir=" + data,
                        "clientPort=" + ensemble.clientPorts[i], "clientPortAddress=127.0.0.1",
                        "admin.enableServer=false", "4lw.commands.whitelist=srvr"));
                lines.addAll(peers);
                Files.writeString(config, String.join("\n", lines) + "\n");
                ensemble.servers[i] = ManagedProcess.startJava(QuorumPeerMain.class, config.toString());
            }
            for (int port : ensemble.clientPorts) {
                Poll.until("ensemble member on " + port + " serving", TestTimes.scaled(Duration.ofSeconds(60)),
                        () -> ZooKeeperServer.serving(port));
            }
            return ensemble;
        } catch (IOException e) {
            ensemble.close();
            throw new UncheckedIOException(e);
        }
    }

    String uri() {
        return "zk://" + java.util.Arrays.stream(clientPorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    /** @return the index of the member that says it leads, or -1 */
    int leader() {
        for (int i = 0; i < 3; i++) {
            if (servers[i] != null && servers[i].isAlive() && mode(clientPorts[i]).contains("leader")) {
                return i;
            }
        }
        return -1;
    }

    /** Kills a member with SIGKILL. */
    void kill(int index) {
        servers[index].kill(TestTimes.scaled(Duration.ofSeconds(10)));
    }

    /** @return whether the other members have a leader again (an election finished) */
    boolean hasLeader() {
        return leader() >= 0;
    }

    private static String mode(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        for (ManagedProcess server : servers) {
            if (server != null) {
                server.close();
            }
        }
    }
}
