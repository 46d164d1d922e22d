package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A real ZooKeeper server on a loopback port: a child JVM running ZooKeeper's main class
 * ({@value ZooKeeperSettings#MAIN_CLASS}) from a class path that must hold it (by default this
 * JVM's, which does when the caller depends on ZooKeeper; this module does not), with a
 * configuration file and data directory of its own. Standalone when started from
 * {@link #builder()}, a member when a {@link ZooKeeperEnsemble} starts it. It serves once
 * {@code srvr} answers with its mode; the admin server is off and {@code ruok}, {@code srvr} and
 * {@code mntr} are whitelisted ({@link FourLetterWords}). Faults: {@link #kill()},
 * {@link #pause()}, {@link #resume()}, {@link #restart()} (same port and data: its transaction
 * ids, and the fencing tokens made from them, go on growing). A data directory it made is deleted
 * on close. Not thread-safe: one test or one fault loop drives it.
 */
public final class ZooKeeperServer extends LoopbackServer {
    private final Path dir;
    private final boolean temporaryDir;

    ZooKeeperServer(int port, List<String> command, Options<?> options, Path dir, boolean temporaryDir) {
        super("zookeeper", port, command, options);
        this.dir = dir;
        this.temporaryDir = temporaryDir;
    }

    /** @return a builder with the defaults of the tests: a free port, ticks of 200 ms, sessions of 400 ms to 60 s, fsync on */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a standalone server with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if ZooKeeper is not on this JVM's class path, or does not serve in time
     */
    public static ZooKeeperServer start() {
        return builder().start();
    }

    @Override
    protected String servesWhen() {
        return "answer srvr with its mode";
    }

    @Override
    protected boolean serves() {
        return mode().isPresent();
    }

    /** @return its engine URI, {@code zk://127.0.0.1:PORT}; add a chroot path and {@code ?sessionTimeout=} as needed */
    @Override
    public String uri() {
        return "zk://" + hostPort();
    }

    /** @return its connect string for a ZooKeeper or Curator client, {@code 127.0.0.1:PORT} */
    public String connectString() {
        return hostPort();
    }

    /** @return its data directory (with {@code myid} in a member's) */
    public Path dir() {
        return dir;
    }

    /** @return {@code leader}, {@code follower} or {@code standalone}; empty when it does not serve now */
    public Optional<String> mode() {
        return isRunning() && !isPaused() ? FourLetterWords.mode(port()) : Optional.empty();
    }

    /**
     * @return its answer to {@code srvr} by line name ({@code Received}, {@code Node count}, ...)
     * @throws ServerException if it does not serve
     */
    public Map<String, String> srvr() {
        return answered("srvr", FourLetterWords.srvr(port()));
    }

    /**
     * @return its answer to {@code mntr} by statistic ({@code zk_approximate_data_size}, ...)
     * @throws ServerException if it does not serve
     */
    public Map<String, String> mntr() {
        return answered("mntr", FourLetterWords.mntr(port()));
    }

    /**
     * @return its version, e.g. {@code 3.9.3}
     * @throws ServerException if it does not serve
     */
    public String version() {
        return srvr().getOrDefault("Zookeeper version", "unknown").split("[-, ]")[0];
    }

    private Map<String, String> answered(String word, Map<String, String> answer) {
        if (answer.isEmpty()) {
            throw new ServerException(this + " did not answer " + word + (isRunning() ? "" : "; it is not running")
                    + process().diagnostics());
        }
        return answer;
    }

    /** Kills the server (continuing it first if paused), and deletes its data directory if it made it. */
    @Override
    public void close() {
        super.close();
        if (temporaryDir) {
            Directories.deleteQuietly(dir);
        }
    }

    /**
     * Options of a {@link ZooKeeperServer}; each has the default the tests want. Not thread-safe.
     * Its output (see {@link #output}) is the JVM's, ZooKeeper's log included.
     */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private final ZooKeeperSettings settings = new ZooKeeperSettings();
        private Path dir;

        private Builder() {
            startTimeout(Timeouts.scaled(Duration.ofSeconds(30)));
        }

        /**
         * @param tickTime ZooKeeper's time unit ({@code tickTime}): sessions expire on its
         *     boundaries; 200 ms by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 ms
         */
        public Builder tickTime(Duration tickTime) {
            settings.tickTime(tickTime);
            return this;
        }

        /**
         * @param min the shortest session a client may ask for; by default two ticks
         * @param max the longest; 60 s by default
         * @return this builder
         * @throws IllegalArgumentException if min is less than 1 ms or max is less than min
         */
        public Builder sessionTimeouts(Duration min, Duration max) {
            settings.sessionTimeouts(min, max);
            return this;
        }

        /**
         * @param forceSync whether each transaction is fsynced before it is answered, as in
         *     production (the default); off is {@code forceSync=no}, for benchmarks of the client
         * @return this builder
         */
        public Builder forceSync(boolean forceSync) {
            settings.forceSync(forceSync);
            return this;
        }

        /**
         * @param options the child JVM's options, instead of the default small quick-starting
         *     {@code -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto}
         * @return this builder
         */
        public Builder jvmOptions(String... options) {
            settings.jvmOptions(options);
            return this;
        }

        /**
         * @param classPath the class path that holds ZooKeeper's server; this JVM's by default
         * @return this builder
         * @throws IllegalArgumentException if it is empty
         */
        public Builder classPath(String classPath) {
            settings.classPath(classPath);
            return this;
        }

        /**
         * @param dir where its configuration and data go, kept after close; by default a
         *     temporary directory deleted on close
         * @return this builder
         */
        public Builder dir(Path dir) {
            this.dir = dir;
            return this;
        }

        /**
         * Starts the server and waits until it serves.
         *
         * @return the running server
         * @throws ServerException if ZooKeeper's main class is not on the class path, or the
         *     server ends before it serves (with its output), or does not serve in time
         */
        public ZooKeeperServer start() {
            int port = portOrFree();
            Path home = dir == null ? Directories.createTemp(null, "cerberus-zk-") : dir;
            try {
                Path config = home.resolve("zoo.cfg");
                List<String> command = settings.command(config);
                List<String> lines = new ArrayList<>(settings.configLines(home.resolve("data"), port));
                Directories.write(config, String.join("\n", lines) + "\n");
                ZooKeeperServer server = new ZooKeeperServer(port, command, this, home, dir == null);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                if (dir == null) {
                    Directories.deleteQuietly(home);
                }
                throw e;
            }
        }

        ZooKeeperSettings settings() {
            return settings;
        }
    }
}
