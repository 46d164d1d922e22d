package io.cerberus.shedlock;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.LeaseLossListener;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} whose locks are Cerberus leases, on
 * whatever engine the client uses: {@code new CerberusLockProvider(cerberus)} in place of another
 * provider, and the {@code @SchedulerLock} methods stay as they are.
 *
 * <p>The contract is ShedLock's, and its own provider test suite passes on it: a name is held by
 * one instance at a time; {@code lockAtLeastFor} keeps it after the task; {@code lockAtMostFor}
 * frees it even if the task still runs (unless {@link Builder#renewPastLockAtMostFor}). What
 * Cerberus adds: the lease is renewed while the task runs, so an instance that dies frees its
 * lock after the client's lease (30 s by default) instead of after {@code lockAtMostFor}; a lock
 * lost while its task runs is logged and told to the {@link Builder#onLost listener}; the task
 * reads its {@linkplain #lease(String) lease}, for its fencing token.
 *
 * <p>Invariants: at most one open hold per name in this provider; a hold is released exactly
 * once, by its unlock, its {@code lockAtMostFor} or its {@code lockAtLeastFor} deadline; a
 * {@code lockAtLeastFor} kept after the task is kept, renewed, by this process, so a process that
 * dies in that time frees the lock after the lease. Thread-safe.
 */
public final class CerberusLockProvider implements ExtensibleLockProvider, AutoCloseable {
    /** The prefix of the Cerberus lock names, so that job names do not meet the application's own locks. */
    public static final String DEFAULT_PREFIX = "shedlock:";

    private static final Duration CENTURY = Duration.ofDays(36_525);
    private static final Duration DEFAULT_SHUTDOWN_WAIT = Duration.ofSeconds(30);
    private static final Logger LOG = LoggerFactory.getLogger(CerberusLockProvider.class);

    private final Cerberus cerberus;
    private final String prefix;
    private final boolean renewPastLockAtMostFor;
    private final LeaseLossListener lossListener;
    private final Duration shutdownWait;
    private final ConcurrentMap<String, ShedLockHold> holds = new ConcurrentHashMap<>();
    /** Signalled when a hold leaves {@link #holds}, for {@link #close()}. */
    private final ReentrantLock forgotten = new ReentrantLock();

    private final Condition unlocked = forgotten.newCondition();
    private final ScheduledExecutorService timer;

    /**
     * A provider with the defaults: names prefixed {@value #DEFAULT_PREFIX}, {@code lockAtMostFor}
     * enforced as ShedLock does, losses logged.
     *
     * @param cerberus the client whose engine keeps the locks; closed by its owner, not here
     */
    public CerberusLockProvider(Cerberus cerberus) {
        this(builder(cerberus));
    }

    private CerberusLockProvider(Builder builder) {
        this.cerberus = builder.cerberus;
        this.prefix = builder.prefix;
        this.renewPastLockAtMostFor = builder.renewPastLockAtMostFor;
        this.lossListener = builder.lossListener;
        this.shutdownWait = builder.shutdownWait;
        this.timer = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "cerberus-shedlock-timer");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * @param cerberus the client whose engine keeps the locks
     * @return a builder of a provider with other than the default settings
     */
    public static Builder builder(Cerberus cerberus) {
        return new Builder(cerberus);
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String name = configuration.getName();
        Optional<Lease> lease;
        try {
            lease = cerberus.lock(prefix + name).tryAcquire(Duration.ZERO);
        } catch (InterruptedException e) {
            // the scheduler is stopping: the flag stays set for it, and the task does not run
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        if (lease.isEmpty()) {
            return Optional.empty();
        }
        ShedLockHold hold = new ShedLockHold(this, name, lease.get());
        holds.put(name, hold);
        lease.get().onLost(hold::lost);
        return Optional.of(hold.start(configuration));
    }

    /**
     * The lease of a lock this provider holds for a task now running, for its fencing token
     * ({@code lease.fence()}) or to check {@code lease.isValid()} before a step that must not run
     * twice. Empty once the task has unlocked, also while {@code lockAtLeastFor} still keeps it.
     *
     * @param name the ShedLock lock name, as in {@code @SchedulerLock(name = ...)}
     * @return the lease, or empty if this provider holds no lock of that name for a running task
     */
    public Optional<Lease> lease(String name) {
        ShedLockHold hold = holds.get(name);
        return hold == null ? Optional.empty() : hold.runningLease();
    }

    /**
     * Waits for the tasks still running under locks this provider still holds (a lost lock is not
     * waited for) to unlock them, at most the
     * {@linkplain Builder#shutdownWait shutdown wait}, then stops this provider's timer. Closing the
     * Cerberus client releases every lock it holds, so a client closed under a running task would
     * let another instance start the same job: close the provider first (Spring does, as the
     * provider bean depends on the client bean). Locks kept for their {@code lockAtLeastFor} stay
     * held until the client closes or the lease runs out. Idempotent.
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + shutdownWait.toNanos();
        forgotten.lock();
        try {
            while (holds.values().stream().anyMatch(ShedLockHold::runsHeld)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn(
                            "ShedLock tasks still running after waiting {} at shutdown: {}; their locks are released"
                                    + " when the Cerberus client closes, and another instance may start them then",
                            shutdownWait,
                            holds.keySet());
                    break;
                }
                try {
                    unlocked.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        } finally {
            forgotten.unlock();
        }
        timer.shutdownNow();
    }

    boolean renewsPastLockAtMostFor() {
        return renewPastLockAtMostFor;
    }

    LeaseLossListener lossListener() {
        return lossListener;
    }

    String cerberusName(String name) {
        return prefix + name;
    }

    ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        // in milliseconds, saturated: a lockAtMostFor of centuries must not overflow
        long millis = delay.isNegative() ? 0 : delay.compareTo(CENTURY) > 0 ? CENTURY.toMillis() : delay.toMillis();
        return timer.schedule(task, millis, TimeUnit.MILLISECONDS);
    }

    void forget(ShedLockHold hold) {
        forgotten.lock();
        try {
            holds.remove(hold.name(), hold);
            unlocked.signalAll();
        } finally {
            forgotten.unlock();
        }
    }

    /** Settings of a {@link CerberusLockProvider}. */
    public static final class Builder {
        private final Cerberus cerberus;
        private String prefix = DEFAULT_PREFIX;
        private boolean renewPastLockAtMostFor;
        private LeaseLossListener lossListener;
        private Duration shutdownWait = DEFAULT_SHUTDOWN_WAIT;

        private Builder(Cerberus cerberus) {
            if (cerberus == null) {
                throw new IllegalArgumentException("cerberus must not be null");
            }
            this.cerberus = cerberus;
        }

        /**
         * @param prefix put before each ShedLock name to make the Cerberus lock name; may be empty
         * @return this builder
         */
        public Builder prefix(String prefix) {
            if (prefix == null) {
                throw new IllegalArgumentException("prefix must not be null (use \"\" for none)");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * Keeps a lock, renewed, until its task unlocks it, even past {@code lockAtMostFor}: a slow
         * run never overlaps the next, and a dead instance still frees its lock after the lease. A
         * task that hangs then holds its lock until its process ends. Off by default: ShedLock
         * frees a lock at {@code lockAtMostFor}.
         *
         * @param renew whether to renew past {@code lockAtMostFor}
         * @return this builder
         */
        public Builder renewPastLockAtMostFor(boolean renew) {
            this.renewPastLockAtMostFor = renew;
            return this;
        }

        /**
         * @param listener told, once, on a Cerberus event thread, when a lock is lost while its task
         *     runs (the loss is logged either way)
         * @return this builder
         */
        public Builder onLost(LeaseLossListener listener) {
            this.lossListener = listener;
            return this;
        }

        /**
         * @param wait how long {@link CerberusLockProvider#close()} waits for running tasks to
         *     unlock (30 s by default); zero or positive
         * @return this builder
         */
        public Builder shutdownWait(Duration wait) {
            if (wait == null || wait.isNegative()) {
                throw new IllegalArgumentException("shutdownWait must be zero or positive, was " + wait);
            }
            this.shutdownWait = wait;
            return this;
        }

        /** @return the provider */
        public CerberusLockProvider build() {
            return new CerberusLockProvider(this);
        }
    }
}
