package io.cerberus.check.servers;

import io.cerberus.servers.Executables;
import io.cerberus.servers.MemcachedServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server memcached}: one {@link MemcachedServer} on a free loopback port with
 * no evictions ({@code -M}: a full server refuses new entries instead of evicting held locks), its
 * output in {@code <dir>/memcached.out}. Its fault, {@code server-kill}, kills it with SIGKILL
 * (confirmed: exited, port refusing), keeps it down {@code --server-down}, and starts it again on
 * the same port until it answers {@code stats}. memcached keeps nothing across a restart: every
 * lock is free afterwards, which the fault log shows with the entry counts before the kill and
 * after the restart.
 */
final class CheckMemcached implements LockServer {
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private final MemcachedServer server;

    private CheckMemcached(MemcachedServer server) {
        this.server = server;
    }

    /**
     * Starts memcached.
     *
     * @param dir where its output goes
     * @return the running server
     * @throws IllegalArgumentException if memcached is not installed
     */
    static CheckMemcached start(Path dir) throws IOException {
        if (Executables.find("memcached").isEmpty()) {
            throw new IllegalArgumentException(
                    "--server memcached needs memcached; install it with: apt-get install memcached");
        }
        Files.createDirectories(dir);
        return new CheckMemcached(MemcachedServer.builder()
                .output(dir.resolve("memcached.out"))
                .startTimeout(WITHIN)
                .start());
    }

    @Override
    public String uri() {
        return server.uri();
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        long before = server.items();
        record.accept("server-kill");
        server.kill();
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        server.restart();
        long after = server.items();
        record.accept("server-restart");
        record.accept("confirmed server-kill: memcached exited of SIGKILL with port " + server.port()
                + " closed, then answered" + " stats again; entries before the kill " + before + ", after the restart "
                + after + " (memcached keeps nothing)");
    }

    @Override
    public void close() {
        server.close();
    }
}
