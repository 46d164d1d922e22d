package io.cerberus.examples.flashsale;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.util.List;

/** A real redis-server on a free loopback port, started by the test (never the system service), killed by {@link #close()}. */
final class RedisServer implements AutoCloseable {
    private final int port;
    private final ManagedProcess process;

    private RedisServer(int port, ManagedProcess process) {
        this.port = port;
        this.process = process;
    }

    /** @return a started server, without persistence */
    static RedisServer start() {
        int port = FreePorts.next();
        ManagedProcess process = ManagedProcess.start("redis-server-" + port, List.of(
                Executables.require("redis-server", "redis-server").toString(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no"));
        FreePorts.awaitAccepting(port, TestTimes.millis(10_000), "redis-server");
        return new RedisServer(port, process);
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        process.close();
    }
}
