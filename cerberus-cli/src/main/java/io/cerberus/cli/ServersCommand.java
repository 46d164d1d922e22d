package io.cerberus.cli;

import io.cerberus.servers.Deployment;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.Executables;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.MemcachedServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.servers.RedisCluster;
import io.cerberus.servers.RedisGroup;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.ServerException;
import io.cerberus.servers.ZooKeeperServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus servers}: starts the servers the tests use, on free loopback ports, prints one
 * engine URI per kind, and keeps them until SIGINT or SIGTERM, when it stops every process it
 * started and removes their data. For trying engines by hand; the servers are this module's
 * test servers (no persistence, throwaway passwords), never for data anyone keeps.
 */
@Command(
        name = "servers",
        header =
                "Starts real lock servers on free loopback ports and prints their engine URIs, for trying engines by hand.",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {
            "Starts the servers the tests use (each on free 127.0.0.1 ports, data in a temporary directory),"
                    + " prints one line per kind, KIND URI, then 'ready', and keeps them running until Ctrl-C or SIGTERM;"
                    + " then it stops them all and deletes their data. Without --kinds, every kind whose server program is"
                    + " installed; the others are listed as skipped, with the package to install.",
            "",
            "Throwaway servers: no persistence, loopback only. Not for data anyone keeps."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "130:stopped by Ctrl-C (SIGINT)",
            "143:stopped by SIGTERM",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.INTERNAL_LINE
        })
final class ServersCommand implements Callable<Integer> {

    /**
     * A kind of deployment: the program it needs (and its package; none for ZooKeeper and H2,
     * whose servers are in this jar), and how to start it in a directory.
     */
    private record Kind(String program, String debianPackage, Function<Path, Deployment> start) {}

    private static final Map<String, Kind> KINDS = kinds();

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--kinds",
            split = ",",
            paramLabel = "KIND[,KIND...]",
            description = "The kinds to start, of: ${COMPLETION-CANDIDATES}. Default: every installed kind.",
            completionCandidates = KindNames.class)
    private List<String> kinds;

    private static Map<String, Kind> kinds() {
        Map<String, Kind> kinds = new LinkedHashMap<>();
        kinds.put("redis", new Kind("redis-server", "redis-server", dir -> RedisServer.start()));
        kinds.put(
                "redlock",
                new Kind(
                        "redis-server",
                        "redis-server",
                        dir -> RedisGroup.builder().dir(dir).start()));
        kinds.put(
                "sentinel",
                new Kind(
                        "redis-server",
                        "redis-server",
                        dir -> RedisSentinel.builder().dir(dir).start()));
        kinds.put(
                "cluster",
                new Kind(
                        "redis-cli",
                        "redis-tools",
                        dir -> RedisCluster.builder().dir(dir).start()));
        kinds.put("memcached", new Kind("memcached", "memcached", dir -> MemcachedServer.start()));
        kinds.put("zk", new Kind(null, null, dir -> ZooKeeperServer.start()));
        kinds.put("etcd", new Kind("etcd", "etcd-server", dir -> EtcdServer.start()));
        // their data directories are their own temporary ones: the servers' system users must reach them
        kinds.put("postgres", new Kind("postgres", "postgresql", dir -> PostgresServer.start()));
        kinds.put("mariadb", new Kind("mariadbd", "mariadb-server", dir -> MariaDbServer.start()));
        kinds.put("h2", new Kind(null, null, dir -> H2Server.builder().dir(dir).start()));
        return kinds;
    }

    /** The kind names, for picocli's help. */
    static final class KindNames implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return KINDS.keySet().iterator();
        }
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        List<String> wanted = kinds == null ? List.copyOf(KINDS.keySet()) : kinds;
        for (String kind : wanted) {
            if (!KINDS.containsKey(kind)) {
                throw new ParameterException(
                        spec.commandLine(),
                        "--kinds: no server kind '" + kind + "'; the kinds are " + String.join(", ", KINDS.keySet()));
            }
        }
        Path dir = Files.createTempDirectory("cerberus-servers-");
        List<Deployment> started = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread stop = new Thread(
                () -> {
                    stopAll(started, dir);
                    out.println("stopped");
                    out.flush();
                    stopped.countDown();
                },
                "cerberus-servers-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            for (String name : wanted) {
                Kind kind = KINDS.get(name);
                if (kind.program() != null && Executables.find(kind.program()).isEmpty()) {
                    if (kinds != null) {
                        throw new CliFailure(kind.program() + " is not installed; install it with: apt-get install -y "
                                + kind.debianPackage());
                    }
                    out.printf(
                            "%-10s skipped: %s is not installed (apt-get install -y %s)%n",
                            name, kind.program(), kind.debianPackage());
                    continue;
                }
                Path kindDir = Files.createDirectories(dir.resolve(name));
                Deployment deployment;
                try {
                    deployment = kind.start().apply(kindDir);
                } catch (ServerException e) {
                    throw new CliFailure("could not start " + name + ": " + e.getMessage(), e);
                }
                synchronized (started) {
                    started.add(deployment);
                }
                out.printf("%-10s %s%n", name, deployment.uri());
                out.flush();
            }
            out.println("ready; Ctrl-C stops them");
            out.flush();
        } catch (RuntimeException e) {
            Runtime.getRuntime().removeShutdownHook(stop);
            stopAll(started, dir);
            throw e;
        }
        stopped.await(); // until SIGINT or SIGTERM: the shutdown hook stops the servers and ends the wait
        return ExitCodes.OK;
    }

    private static void stopAll(List<Deployment> started, Path dir) {
        synchronized (started) {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).close();
            }
            started.clear();
        }
        try {
            Directories.deleteRecursively(dir);
        } catch (IOException e) {
            System.err.println("cerberus servers: could not delete " + dir + ": " + e.getMessage());
        }
    }
}
