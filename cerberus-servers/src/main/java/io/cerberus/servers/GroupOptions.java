package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The options every group's builder has ({@link RedisGroup}, {@link RedisSentinel},
 * {@link RedisCluster}, {@link ZooKeeperEnsemble}, {@link EtcdCluster}): the group's directory and
 * how long a member may take to serve. Not thread-safe.
 *
 * @param <B> the group's builder, returned by each setter
 */
public abstract class GroupOptions<B extends GroupOptions<B>> {
    private Path dir;
    private Duration startTimeout;

    /** @param startTimeout the group's default start timeout, before scaling by {@link Timeouts} */
    protected GroupOptions(Duration startTimeout) {
        this.startTimeout = Timeouts.scaled(startTimeout);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * @param dir the group's directory, kept after close: each member keeps its data and appends
     *     its output ({@code server.out}) in a directory of its own there, named in the group's
     *     builder; by default a temporary directory deleted on close, with the output shown only in
     *     failure messages
     * @return this builder
     */
    public B dir(Path dir) {
        this.dir = dir;
        return self();
    }

    /**
     * @param startTimeout how long a member's start or restart may take until it serves; the
     *     group's builder names its default, scaled by {@link Timeouts}
     * @return this builder
     * @throws IllegalArgumentException if it is not positive
     */
    public B startTimeout(Duration startTimeout) {
        this.startTimeout = Timeouts.positive("startTimeout", startTimeout);
        return self();
    }

    /** @return the directory given, or null */
    protected final Path dir() {
        return dir;
    }

    /** @return the start timeout, scaled */
    protected final Duration startTimeout() {
        return startTimeout;
    }

    /**
     * @param prefix the name a temporary directory starts with
     * @return the directory given (made if missing), or a new temporary one
     * @throws ServerException if it cannot be made
     */
    protected final Path home(String prefix) {
        return dir == null ? Directories.createTemp(null, prefix) : Directories.create(dir);
    }

    /** @return whether the group's directory is a temporary one, deleted on close */
    protected final boolean temporaryHome() {
        return dir == null;
    }

    /**
     * @param other options to take the directory and start timeout from
     * @return this builder
     */
    protected final B copyGroupOptions(GroupOptions<?> other) {
        this.dir = other.dir;
        this.startTimeout = other.startTimeout;
        return self();
    }
}
