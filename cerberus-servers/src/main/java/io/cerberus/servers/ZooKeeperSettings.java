package io.cerberus.servers;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

/**
 * What a ZooKeeper server of this module runs with, shared by {@link ZooKeeperServer} and the
 * members of a {@link ZooKeeperEnsemble}: the child JVM (its options and class path, which must
 * hold ZooKeeper's main class) and the configuration file (ticks, session timeouts, fsync; the
 * admin server off; the four-letter words this module asks whitelisted). Not thread-safe.
 */
final class ZooKeeperSettings {
    /** The class a ZooKeeper server (standalone or ensemble member) starts with. */
    static final String MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

    private Duration tickTime = Duration.ofMillis(200);
    private Duration minSessionTimeout;
    private Duration maxSessionTimeout = Duration.ofSeconds(60);
    private boolean forceSync = true;
    private List<String> jvmOptions = List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto");
    private String classPath = System.getProperty("java.class.path", "");

    void tickTime(Duration tickTime) {
        if (tickTime.toMillis() < 1) {
            throw new IllegalArgumentException("tickTime must be at least 1ms, was " + tickTime);
        }
        this.tickTime = tickTime;
    }

    void sessionTimeouts(Duration min, Duration max) {
        if (min.toMillis() < 1 || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("session timeouts must be at least 1ms with min <= max, were " + min + " and " + max);
        }
        this.minSessionTimeout = min;
        this.maxSessionTimeout = max;
    }

    void forceSync(boolean forceSync) {
        this.forceSync = forceSync;
    }

    void jvmOptions(String... options) {
        this.jvmOptions = List.of(options);
    }

    void classPath(String classPath) {
        if (classPath == null || classPath.isBlank()) {
            throw new IllegalArgumentException("the class path must not be empty");
        }
        this.classPath = classPath;
    }

    /** @return the lines every server's configuration starts with */
    List<String> configLines(Path dataDir, int clientPort) {
        List<String> lines = new ArrayList<>(List.of("tickTime=" + tickTime.toMillis(),
                "minSessionTimeout=" + (minSessionTimeout == null ? 2 * tickTime.toMillis() : minSessionTimeout.toMillis()),
                "maxSessionTimeout=" + maxSessionTimeout.toMillis(),
                "dataDir=" + dataDir, "clientPort=" + clientPort, "clientPortAddress=127.0.0.1",
                "admin.enableServer=false", "4lw.commands.whitelist=ruok,srvr,mntr"));
        if (!forceSync) {
            lines.add("forceSync=no");
        }
        return lines;
    }

    /** @return the ensemble's timings in ticks: a follower has 10 s to join and 2 s to keep up */
    List<String> ensembleLines() {
        long tick = tickTime.toMillis();
        return List.of("initLimit=" + Math.max(1, (10_000 + tick - 1) / tick), "syncLimit=" + Math.max(1, (2_000 + tick - 1) / tick));
    }

    /**
     * @param config the server's configuration file
     * @return the command of the child JVM
     * @throws ServerException if ZooKeeper's main class is not on the class path
     */
    List<String> command(Path config) {
        requireMainClass();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, MAIN_CLASS, config.toString()));
        return command;
    }

    private void requireMainClass() {
        String resource = MAIN_CLASS.replace('.', '/') + ".class";
        for (String entry : classPath.split(File.pathSeparator)) {
            if (entry.endsWith("*")) {
                try (DirectoryStream<Path> jars = Files.newDirectoryStream(Path.of(entry.substring(0, entry.length() - 1)), "*.jar")) {
                    for (Path jar : jars) {
                        if (holds(jar, resource)) {
                            return;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // not a directory: not on the class path either
                }
            } else if (holds(Path.of(entry.isEmpty() ? "." : entry), resource)) {
                return;
            }
        }
        throw new ServerException("ZooKeeper's " + MAIN_CLASS + " is not on the class path the server would start with ("
                + (classPath.length() > 300 ? classPath.substring(0, 300) + "..." : classPath)
                + "); depend on org.apache.zookeeper:zookeeper (Curator brings it), or give its jars with classPath(...)");
    }

    private static boolean holds(Path entry, String resource) {
        if (Files.isDirectory(entry)) {
            return Files.isRegularFile(entry.resolve(resource));
        }
        if (!Files.isRegularFile(entry)) {
            return false;
        }
        try (JarFile jar = new JarFile(entry.toFile())) {
            return jar.getEntry(resource) != null;
        } catch (IOException e) {
            return false;
        }
    }
}
