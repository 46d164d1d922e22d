package io.cerberus;

import java.util.List;
import java.util.Set;

/**
 * The entry point: a client of one lock engine (or several, see {@link CerberusBuilder}).
 *
 * <pre>{@code
 * try (Cerberus cerberus = Cerberus.connect("file:/var/lock/myapp")) {
 *     DistributedLock lock = cerberus.lock("order:42");
 *     lock.lock();
 *     try {
 *         // one holder at a time, across threads, processes and machines sharing the engine
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 *
 * <p>Thread-safe; meant to live as long as the application. Closing it releases every lock it
 * still holds and stops renewing them.
 */
public interface Cerberus extends AutoCloseable {

    /**
     * Connects to one engine with default settings.
     *
     * @param uri the engine URI: {@code mem:}, {@code file:/dir}, and the schemes of engine modules
     *     on the class path ({@code redis://...}, {@code zk://...}, ...)
     * @return a connected client
     * @throws IllegalArgumentException if the URI is malformed or no engine on the class path
     *     serves its scheme
     * @throws EngineUnavailableException if the engine cannot be reached within the connect timeout
     */
    static Cerberus connect(String uri) {
        return builder().engine(uri).build();
    }

    /** @return a builder for a client with settings or several engines */
    static CerberusBuilder builder() {
        return new CerberusBuilder();
    }

    /**
     * An exclusive lock. Cheap: makes no round trip.
     *
     * @param name the lock name: 1 to 512 characters, no control characters
     * @return the lock
     * @throws IllegalArgumentException if the name breaks a rule
     */
    DistributedLock lock(String name);

    /**
     * An exclusive lock whose waiters are served first come, first served. It is the same lock as
     * {@link #lock(String)} of the same name; only the waiting order differs.
     *
     * @param name the lock name
     * @return the lock
     * @throws IllegalArgumentException if the name breaks a rule
     * @throws UnsupportedCapabilityException if the engine has no fair locks
     */
    DistributedLock fairLock(String name);

    /**
     * A read-write lock over the name.
     *
     * @param name the lock name
     * @return the lock pair
     * @throws IllegalArgumentException if the name breaks a rule
     * @throws UnsupportedCapabilityException if the engine has no read-write locks
     */
    DistributedReadWriteLock readWriteLock(String name);

    /** @return the namespace (application key) every lock name of this client lives in */
    String namespace();

    /** @return the name of the engine new acquisitions go to */
    String currentEngine();

    /** @return the engine URI of {@link #currentEngine()}, without any password */
    String currentEngineUri();

    /** @return what the current engine can do */
    Set<Capability> capabilities();

    /**
     * Lists the holds of this namespace whose lock name starts with {@code prefix}.
     *
     * @param prefix a name prefix, empty for all
     * @return one entry per hold, sorted by name
     * @throws UnsupportedCapabilityException if the engine cannot list its locks
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    List<LockInfo> inspect(String prefix);

    /**
     * Releases every lock this client still holds, stops renewals and disconnects. Idempotent.
     * Failures to release are logged: the engine frees those locks when their leases end.
     */
    @Override
    void close();
}
