package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
    /** The child JVM's options; null for {@link JavaCommand#quickStart} with a heap of 128 MB. */
    private List<String> jvmOptions;
    /** The child JVM's class path; null for this JVM's. */
    private String classPath;

    void tickTime(Duration tickTime) {
        if (tickTime.toMillis() < 1) {
            throw new IllegalArgumentException("tickTime must be at least 1ms, was " + tickTime);
        }
        this.tickTime = tickTime;
    }

    void sessionTimeouts(Duration min, Duration max) {
        if (min.toMillis() < 1 || max.compareTo(min) < 0) {
            throw new IllegalArgumentException(
                    "session timeouts must be at least 1ms with min <= max, were " + min + " and " + max);
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
        this.classPath = JavaCommand.checkedClassPath(classPath);
    }

    /** @return the lines every server's configuration starts with */
    List<String> configLines(Path dataDir, int clientPort) {
        List<String> lines = new ArrayList<>(List.of(
                "tickTime=" + tickTime.toMillis(),
                "minSessionTimeout="
                        + (minSessionTimeout == null ? 2 * tickTime.toMillis() : minSessionTimeout.toMillis()),
                "maxSessionTimeout=" + maxSessionTimeout.toMillis(),
                "dataDir=" + dataDir,
                "clientPort=" + clientPort,
                "clientPortAddress=127.0.0.1",
                "admin.enableServer=false",
                "4lw.commands.whitelist=ruok,srvr,mntr"));
        if (!forceSync) {
            lines.add("forceSync=no");
        }
        return lines;
    }

    /** @return the ensemble's timings in ticks: a follower has 10 s to join and 2 s to keep up */
    List<String> ensembleLines() {
        long tick = tickTime.toMillis();
        return List.of(
                "initLimit=" + Math.max(1, (10_000 + tick - 1) / tick),
                "syncLimit=" + Math.max(1, (2_000 + tick - 1) / tick));
    }

    /**
     * @param config the server's configuration file
     * @return the command of the child JVM
     * @throws ServerException if ZooKeeper's main class is not on the class path
     */
    List<String> command(Path config) {
        JavaCommand command = JavaCommand.of(MAIN_CLASS);
        if (classPath != null) {
            command.classPath(classPath);
        }
        if (jvmOptions == null) {
            command.quickStart("128m");
        } else {
            command.jvmOptions(jvmOptions.toArray(String[]::new));
        }
        return command.args(config.toString())
                .requireMainClass(
                        "depend on org.apache.zookeeper:zookeeper (Curator brings it), or give its jars with classPath(...)")
                .toList();
    }
}
