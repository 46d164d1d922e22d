package io.cerberus;

import java.time.Duration;
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

    /**
     * A semaphore: at most {@code permits} holders at once across every client of the engine and
     * namespace (see {@link DistributedSemaphore}). Its permits are kept apart from locks: a
     * semaphore and a lock of the same name never meet. Cheap: makes no round trip.
     *
     * <pre>{@code
     * try (Permits permit = cerberus.semaphore("partner-api", 4).acquire(1, Duration.ofSeconds(10))) {
     *     partner.call(request);
     * }
     * }</pre>
     *
     * @param name the semaphore's name, under the lock name rules
     * @param permits how many permits, 1 to 1,000
     * @return the semaphore
     * @throws IllegalArgumentException if the name breaks a rule or {@code permits} is out of range
     */
    DistributedSemaphore semaphore(String name, int permits);

    /**
     * Several exclusive locks taken all together or not at all, in one order every client shares
     * (see {@link MultiLock}). Cheap: makes no round trip.
     *
     * @param names the lock names, at least one; a name given twice is taken once
     * @return the multi-lock
     * @throws IllegalArgumentException if there is no name or one breaks the lock name rules
     */
    MultiLock multiLock(String... names);

    /**
     * As {@link #multiLock(String...)}.
     *
     * @param names the lock names, at least one; a name given twice is taken once
     * @return the multi-lock
     * @throws IllegalArgumentException if there is no name or one breaks the lock name rules
     */
    MultiLock multiLock(java.util.Collection<String> names);

    /** @return the namespace (application key) every lock name of this client lives in */
    String namespace();

    /** @return the name of the engine new acquisitions go to */
    String currentEngine();

    /** @return the engine URI of {@link #currentEngine()}, without any password */
    String currentEngineUri();

    /** @return the names of this client's engines, in the order they were added: the primary first */
    List<String> engines();

    /**
     * Sends new acquisitions to the next engine, in the order the engines were added (after the
     * last comes the first). Locks already held stay on the engine that granted them and are
     * released there. Until the longest lease granted by the old engine has passed (the
     * lock-delay, see {@link CerberusBuilder#lockDelay(Duration)}), a new acquisition is also
     * taken on the old engine when it can be reached, so holders that have not switched still
     * exclude it. With one engine this does nothing.
     *
     * @return the name of the engine now in use
     * @throws IllegalStateException if the client is closed
     */
    String switchEngine();

    /**
     * Sends new acquisitions to the named engine, as {@link #switchEngine()} does. Switching to
     * the current engine does nothing.
     *
     * @param engine the name of one of {@link #engines()}
     * @return the name of the engine now in use
     * @throws IllegalArgumentException if no engine has that name
     * @throws IllegalStateException if the client is closed
     */
    String switchEngine(String engine);

    /**
     * Registers a listener told of every switch, manual or automatic (see {@link FailoverPolicy}).
     *
     * @param listener the listener, not {@code null}
     */
    void onEngineSwitch(EngineSwitchListener listener);

    /** @return what the current engine can do */
    Set<Capability> capabilities();

    /**
     * The URI of one of the client's engines, current or not.
     *
     * @param engine the name of one of {@link #engines()}
     * @return its URI, without any password
     * @throws IllegalArgumentException if no engine has that name
     */
    String engineUri(String engine);

    /**
     * Checks that an engine answers, with the one light read (no lock taken) the failover health
     * checks make, and that its server is still set up to keep the guarantees (an engine that
     * reads its server's settings at start-up reads them again). For health endpoints and
     * readiness probes. Thread-safe.
     *
     * @param engine the name of one of {@link #engines()}
     * @return warnings about the engine's settings that weaken a guarantee and that were accepted
     *     (a Redis eviction policy allowed with {@code acceptEviction=true}), or that could not be
     *     read; empty when there is none
     * @throws IllegalArgumentException if no engine has that name
     * @throws EngineUnavailableException if the engine cannot be reached within the connect timeout
     * @throws UnsafeEngineException if the engine's server is now set up in a way that breaks a
     *     guarantee and that was not accepted
     * @throws IllegalStateException if the client is closed
     */
    List<String> checkEngine(String engine);

    /**
     * The locks this client waited for most, since it was built: only acquisitions that found
     * their lock busy count, and at most 256 names are kept (those with the most total wait). Read
     * from memory, never from the engine; the actuator's {@code cerberus} endpoint shows it.
     *
     * @return the contended locks, the most total wait first
     */
    List<LockContention> contention();

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
     * Lists the holds of this namespace on one of the client's engines, current or not.
     *
     * @param engine the name of one of {@link #engines()}
     * @param prefix a name prefix, empty for all
     * @return one entry per hold, sorted by name
     * @throws IllegalArgumentException if no engine has that name
     * @throws UnsupportedCapabilityException if the engine cannot list its locks
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    List<LockInfo> inspectEngine(String engine, String prefix);

    /**
     * Frees a lock held by another process — an operator's tool for a stuck lock (the CLI's
     * {@code cerberus unlock --force}). Name the hold by the fencing token {@link #inspect} showed:
     * if the lock changed hands since, its token is newer and nothing is freed. The old holder learns
     * that it lost the lock (at its next renewal, or by the engine's watch of its holds), and its
     * late writes carry an older token than the next holder's. Logged at WARNING with who freed it
     * and the old holder's description.
     *
     * @param name the lock
     * @param fencingToken the token of the hold to free, from {@link #inspect}
     * @return whether a hold was freed
     * @throws UnsupportedCapabilityException if the current engine cannot free another process's
     *     hold (an OS file lock, a database session lock) or gives no fencing tokens to name it by
     * @throws EngineUnavailableException if the engine cannot be reached
     * @throws IllegalArgumentException if the name breaks the lock name rules
     */
    boolean forceRelease(String name, long fencingToken);

    /**
     * A guard that lets the same operation take effect once, with its records on this client's
     * first engine (see {@link io.cerberus.idempotency.IdempotencyGuard}). Records do not follow
     * {@link #switchEngine()} or a failover: a retry must find what the first attempt stored, on
     * every instance; while the first engine is down the guard fails closed (or runs unguarded, if
     * its options fail open). Keys live in this client's namespace. Guards are cheap (make one per
     * set of options, or per call): all the guards of a client share one renewal thread, which ends
     * with the client.
     *
     * @param options how the guard behaves ({@link io.cerberus.idempotency.IdempotencyOptions#defaults()})
     * @return the guard
     * @throws UnsupportedCapabilityException if the first engine keeps no idempotency records
     */
    io.cerberus.idempotency.IdempotencyGuard idempotency(io.cerberus.idempotency.IdempotencyOptions options);

    /**
     * Runs {@code task} here unless another instance runs it now: the scheduled job's "once per tick
     * across the cluster". The lock {@code name} is tried once, without waiting; held by another, the
     * run is skipped quietly (a DEBUG line and {@link CerberusMetrics#skippedRun}), never an error.
     * Taken, the task runs on the calling thread with the lock renewed for as long as it runs (no
     * guess of how long a run may take), and the lock is kept until {@code atLeast} after the run
     * began, so that an instance whose clock or schedule is a little behind does not run the same
     * tick again; a crash meanwhile still frees it after the lease.
     *
     * <pre>{@code
     * @Scheduled(cron = "0 * * * * *")
     * void sendReminders() {
     *     cerberus.runExclusively("reminders", Duration.ofSeconds(30), lease -> reminders.send(lease.fencingToken()));
     * }
     * }</pre>
     *
     * @param name the job's lock name
     * @param atLeast how long after the run began the lock is kept at least; zero to release at its end
     * @param task the work; its lease tells whether the lock is still held ({@link Lease#isValid()})
     *     and gives the fencing token for its writes
     * @return true if the task ran here, false if skipped
     * @throws LockLostException after the task, if the lock was lost while it ran (another instance
     *     may have run it too)
     * @throws EngineUnavailableException if the engine cannot be reached (the task did not run)
     * @throws IllegalArgumentException if the name breaks the lock name rules or {@code atLeast} is negative
     */
    boolean runExclusively(String name, Duration atLeast, java.util.function.Consumer<Lease> task);

    /**
     * A participant in electing a leader among the clients that use {@code name} (see
     * {@link Leadership}), with an id made of this process's id, host and a random suffix.
     *
     * @param name the election's name, a lock name
     * @return the participant, not contending until {@link Leadership#start()}
     * @throws IllegalArgumentException if the name breaks the lock name rules
     */
    Leadership leadership(String name);

    /**
     * As {@link #leadership(String)}, with the participant id given: shown as the leader by
     * {@link Leadership#currentLeader()} and {@code cerberus inspect}.
     *
     * @param name the election's name, a lock name
     * @param participantId 1 to 200 characters, no control characters
     * @return the participant, not contending until {@link Leadership#start()}
     * @throws IllegalArgumentException if the name or the id breaks its rule
     */
    Leadership leadership(String name, String participantId);

    /**
     * Releases every lock this client still holds, stops renewals and disconnects. Idempotent.
     * Failures to release are logged: the engine frees those locks when their leases end.
     */
    @Override
    void close();
}
