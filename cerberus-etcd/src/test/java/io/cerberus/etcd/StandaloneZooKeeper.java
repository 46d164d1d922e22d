package io.cerberus.etcd;

import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
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
 * A real standalone ZooKeeper in a child JVM, on a free loopback port with its data in a temporary
 * directory, that a test can kill and restart with the same data (so its transaction ids, and the
 * fencing tokens made from them, go on growing).
 * A copy of cerberus-zookeeper's test ZooKeeperServer, until a servers module shares one.
 */
final class StandaloneZooKeeper implements AutoCloseable {
    private final int port;
    private final Path dir;
    private ManagedProcess process;

    private StandaloneZooKeeper(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    /** @return a started server */
    static StandaloneZooKeeper start() {
        try {
            StandaloneZooKeeper server = new StandaloneZooKeeper(FreePorts.next(), Files.createTempDirectory("cerberus-zk-"));
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
                "admin.enableServer=false", "4lw.commands.whitelist=srvr", ""));
        process = ManagedProcess.startJava(QuorumPeerMain.class, config.toString());
        try {
            FreePorts.awaitAccepting(port, TestTimes.scaled(Duration.ofSeconds(30)), "zookeeper");
            Poll.until("zookeeper on port " + port + " serving requests", TestTimes.scaled(Duration.ofSeconds(30)), this::serving);
        } catch (ServerException | AssertionError e) {
            AssertionError failed = new AssertionError(e.getMessage() + process.diagnostics(), e);
            process.close();
            throw failed;
        }
    }

    /** @return whether the server answers the four-letter command srvr with its mode (it serves requests) */
    private boolean serving() {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).contains("Mode:");
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the URI of the server; without a sessionTimeout the client's default lease is the session timeout */
    String uri() {
        return "zk://127.0.0.1:" + port;
    }

    /** Kills the server with SIGKILL and waits until it is gone. */
    void kill() {
        process.kill(TestTimes.scaled(Duration.ofSeconds(10)));
    }

    /** Starts it again, on the same port, with the same data, and waits until it serves. */
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
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
