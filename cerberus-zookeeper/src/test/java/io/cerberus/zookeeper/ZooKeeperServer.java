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
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * A real ZooKeeper server (standalone), run from the ZooKeeper jar on the test class path in a
 * child JVM, on a free loopback port with its data in a temporary directory. Debian has no
 * ZooKeeper server package for this; Maven brings the jar with Curator.
 */
final class ZooKeeperServer implements AutoCloseable {
    private final int port;
    private final Path dir;
    private ManagedProcess process;

    private ZooKeeperServer(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    static ZooKeeperServer start() {
        try {
            ZooKeeperServer server = new ZooKeeperServer(FreePorts.next(), Files.createTempDirectory("cerberus-zk-"));
            server.startProcess();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void startProcess() throws IOException {
        Path config = dir.resolve("zoo.cfg");
        Files.writeString(config, String.join("\n",
                "tickTime=200", "minSessionTimeout=400", "maxSessionTimeout=60000",
                "dataDir=" + dir.resolve("data"), "clientPort=" + port, "clientPortAddress=127.0.0.1",
                "admin.enableServer=false", "4lw.commands.whitelist=ruok,srvr", "") );
        process = ManagedProcess.startJava(QuorumPeerMain.class, config.toString());
        FreePorts.awaitAccepting(port, TestTimes.scaled(Duration.ofSeconds(30)), "zookeeper");
        Poll.until("zookeeper on port " + port + " serving requests", TestTimes.scaled(Duration.ofSeconds(30)), () -> serving(port));
    }

    /** @return whether the server answers the four-letter command srvr with its mode (it serves requests) */
    static boolean serving(int port) {
        return fourLetters(port, "srvr").contains("Mode:");
    }

    /** @return the packets the server has received since it started (requests and pings), from {@code srvr} */
    long packetsReceived() {
        return fourLetters(port, "srvr").lines().filter(line -> line.startsWith("Received:")).findFirst()
                .map(line -> Long.parseLong(line.substring("Received:".length()).strip()))
                .orElseThrow(() -> new AssertionError("zookeeper on port " + port + " did not answer srvr with its packet count"));
    }

    /** @return the server's answer to a four-letter command, empty when it does not answer */
    private static String fourLetters(int port, String command) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    int port() {
        return port;
    }

    String uri() {
        return "zk://127.0.0.1:" + port;
    }

    /** Kills the server with SIGKILL. */
    void kill() {
        process.kill(TestTimes.scaled(Duration.ofSeconds(10)));
    }

    /** Stops the server with SIGSTOP: it keeps its connections but answers nothing until {@link #resume()}. */
    void pause() {
        process.signal("STOP");
    }

    /** Lets a paused server run again (SIGCONT). */
    void resume() {
        process.signal("CONT");
    }

    /** Starts it again with the same data. */
    void restart() {
        try {
            startProcess();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
    }
}
