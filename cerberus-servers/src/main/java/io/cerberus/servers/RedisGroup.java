package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Independent Redis masters on loopback, as Redlock counts them: {@link RedisServer}s that know
 * nothing of each other, with one {@code redlock://} URI. Faults are per node: {@link #node(int)}
 * and kill, pause or restart it; {@link #heal()} resumes the paused ones and starts the killed
 * ones again. Invariant: {@link #nodes()} always lists the same servers in the same order (node 1
 * first), each on its own port. Not thread-safe: one test or one fault loop drives it.
 */
public final class RedisGroup implements Deployment {
    private final List<RedisServer> nodes;

    private RedisGroup(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /** @return a builder with the defaults: five nodes, no persistence, no extra arguments */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts {@code count} masters with the defaults of {@link #builder()}.
     *
     * @param count how many, at least 1
     * @return the running group
     * @throws IllegalArgumentException if {@code count} is less than 1
     * @throws ServerException if a server does not come up in time
     */
    public static RedisGroup start(int count) {
        return builder().count(count).start();
    }

    /** @return the servers, node 1 first */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * @param index the node's index, 0 for node 1
     * @return that server
     * @throws IndexOutOfBoundsException if there is no such node
     */
    public RedisServer node(int index) {
        return nodes.get(index);
    }

    /** @return {@code redlock://127.0.0.1:P1,127.0.0.1:P2,...}, node 1 first */
    @Override
    public String uri() {
        return "redlock://" + nodes.stream().map(RedisServer::hostPort).collect(Collectors.joining(","));
    }

    /** Resumes paused nodes and starts killed ones again, each on its port. */
    @Override
    public void heal() {
        nodes.forEach(RedisServer::heal);
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "Redis masters " + uri();
    }

    /**
     * Options of a {@link RedisGroup}. With a {@link #dir}, node N keeps its data and output in
     * {@code dir/nodeN} ({@code server.out}); without one, the nodes keep no files (no persistence)
     * and their output is temporary; each start may take 10 s (scaled). Not thread-safe.
     */
    public static final class Builder extends GroupOptions<Builder> {
        private int count = 5;
        private RedisServer.Persistence persistence = RedisServer.Persistence.NONE;
        private final List<String> args = new ArrayList<>();

        private Builder() {
            super(Duration.ofSeconds(10));
        }

        /**
         * @param count how many masters; 5 by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder count(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("a Redis group needs at least 1 node, was " + count);
            }
            this.count = count;
            return this;
        }

        /**
         * @param persistence what each node keeps across a kill; none by default. With
         *     {@link RedisServer.Persistence#AOF_ALWAYS} give a {@link #dir}.
         * @return this builder
         */
        public Builder persistence(RedisServer.Persistence persistence) {
            this.persistence = persistence;
            return this;
        }

        /**
         * @param args more redis-server options for every node, e.g. {@code "--requirepass", "secret"}
         * @return this builder
         */
        public Builder args(String... args) {
            this.args.addAll(List.of(args));
            return this;
        }

        /**
         * Starts the nodes one after the other; if one fails, stops those already started.
         *
         * @return the running group
         * @throws IllegalArgumentException if persistence is asked for without a directory
         * @throws ServerException if a node does not come up in time, or its directory cannot be made
         */
        public RedisGroup start() {
            if (persistence != RedisServer.Persistence.NONE && dir() == null) {
                throw new IllegalArgumentException(
                        "persistence " + persistence + " needs a dir for the append-only files");
            }
            List<RedisServer> nodes = new ArrayList<>();
            try {
                for (int i = 1; i <= count; i++) {
                    RedisServer.Builder node = RedisServer.builder()
                            .persistence(persistence)
                            .startTimeout(startTimeout())
                            .args(args.toArray(String[]::new));
                    if (dir() != null) {
                        Path nodeDir = Directories.create(dir().resolve("node" + i));
                        node.dir(nodeDir).output(nodeDir.resolve("server.out"));
                    }
                    nodes.add(node.start());
                }
            } catch (RuntimeException e) {
                nodes.forEach(RedisServer::close);
                throw e;
            }
            return new RedisGroup(nodes);
        }
    }
}
