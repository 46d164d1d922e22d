package io.cerberus.bench;

import io.cerberus.servers.Await;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * The ZooKeeper server of a run: a standalone server from the ZooKeeper jar on this class path, in
 * a child JVM, on a free loopback port (as cerberus-zookeeper's tests start it, ZooKeeperServer,
 * with the JIT at full power and without fsync, like the Redis and PostgreSQL servers of the bench).
 */
final class ZooKeeperProcess implements AutoCloseable {
    private final int port;
    private final Path dir;
    private final ManagedProcess process;

    private ZooKeeperProcess(int port, Path dir, ManagedProcess process) {
        this.port = port;
        this.dir = dir;
        this.process = process;
    }

    static ZooKeeperProcess start() {
        try {
            int port = FreePorts.next();
            Path dir = Files.createTempDirectory("cerberus-bench-zk-");
            Path config = dir.resolve("zoo.cfg");
            Files.writeString(config, String.join("\n", "tickTime=2000", "dataDir=" + dir.resolve("data"), "clientPort=" + port,
                    "clientPortAddress=127.0.0.1", "forceSync=no", "admin.enableServer=false", "4lw.commands.whitelist=srvr,mntr", ""));
            ManagedProcess process = ManagedProcess.start("zookeeper-" + port, List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-cp",
                    System.getProperty("java.class.path"), QuorumPeerMain.class.getName(), config.toString()));
            ZooKeeperProcess server = new ZooKeeperProcess(port, dir, process);
            try {
                Await.until("zookeeper on port " + port + " serving requests", Duration.ofSeconds(60), process,
                        () -> server.srvr().contains("Mode:"));
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the answer to the four-letter command {@code srvr}, empty when the server does not answer */
    private String srvr() {
        return fourLetters("srvr");
    }

    private String fourLetters(String command) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    String connectString() {
        return "127.0.0.1:" + port;
    }

    String uri() {
        return "zk://127.0.0.1:" + port;
    }

    String version() {
        return srvr().lines().filter(line -> line.startsWith("Zookeeper version:")).findFirst()
                .map(line -> "ZooKeeper " + line.substring("Zookeeper version:".length()).strip().split("[-, ]")[0])
                .orElse("ZooKeeper (version unknown)");
    }

    /** @return the packets the server has received (requests and pings), from {@code srvr} */
    long packetsReceived() {
        return srvr().lines().filter(line -> line.startsWith("Received:")).findFirst()
                .map(line -> Long.parseLong(line.substring("Received:".length()).strip())).orElse(0L);
    }

    /** @return the nodes in the server's tree ({@code srvr}'s node count) */
    long nodes() {
        return srvr().lines().filter(line -> line.startsWith("Node count:")).findFirst()
                .map(line -> Long.parseLong(line.substring("Node count:".length()).strip())).orElse(0L);
    }

    /** @return the bytes of node data and paths the server keeps ({@code mntr}'s approximate data size) */
    long dataSize() {
        return fourLetters("mntr").lines().filter(line -> line.startsWith("zk_approximate_data_size")).findFirst()
                .map(line -> Long.parseLong(line.substring("zk_approximate_data_size".length()).strip())).orElse(0L);
    }

    @Override
    public void close() {
        process.close();
        TempDirectory.delete(dir);
    }
}
