package io.cerberus.shedlock;

import io.cerberus.CerberusException;
import io.cerberus.Lease;
import io.cerberus.LeaseLossListener;
import io.cerberus.LockLostException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One hold of a ShedLock name: the Cerberus lease, and the {@link SimpleLock} a task holds it
 * through (a new one after each extension; the old one then refuses use, as ShedLock's contract
 * says).
 *
 * <p>State moves RUNNING → KEPT → DONE or RUNNING → DONE, never back, under {@code stateLock} (a
 * lock, not a monitor: a release is a request to the engine, and a virtual thread must not pin its
 * carrier through it).
 * RUNNING: a task holds it. KEPT: the task unlocked before its {@code lockAtLeastFor} ran out; the
 * lease stays, renewed, until then. DONE: released. The lease is released once, on the way to DONE:
 * by the unlock, by the {@code lockAtMostFor} deadline, by a refused extension, or when the kept
 * time ends.
 */
final class ShedLockHold {
    private static final Logger LOG = LoggerFactory.getLogger(CerberusLockProvider.class);

    private enum State {
        RUNNING,
        KEPT,
        DONE
    }

    private final CerberusLockProvider provider;
    private final String name;
    private final Lease lease;
    private final ReentrantLock stateLock = new ReentrantLock();
    /** Written under {@code stateLock}; read without it by {@link #runningLease} (see there). */
    private volatile State state = State.RUNNING;
    /** The lock the task holds now; the only one whose unlock or extension counts. */
    private TaskLock current;
    /** The release at {@code lockAtMostFor} or at the end of {@code lockAtLeastFor}; or null. */
    private ScheduledFuture<?> deadline;

    ShedLockHold(CerberusLockProvider provider, String name, Lease lease) {
        this.provider = provider;
        this.name = name;
        this.lease = lease;
    }

    String name() {
        return name;
    }

    SimpleLock start(LockConfiguration configuration) {
        stateLock.lock();
        try {
            current = new TaskLock(configuration);
            armLockAtMostFor(current);
            return current;
        } finally {
            stateLock.unlock();
        }
    }

    /** @return whether a task runs under this hold and its lease is still valid */
    boolean runsHeld() {
        return runningLease().map(Lease::isValid).orElse(false);
    }

    /**
     * Reads the state without {@code stateLock}: the provider's {@code close} asks this while it holds its own lock,
     * which an unlocking task takes under {@code stateLock} ({@link CerberusLockProvider#forget}), so taking
     * {@code stateLock} here could deadlock the two. The lease is final; the state is a moment's reading.
     */
    Optional<Lease> runningLease() {
        return state == State.RUNNING ? Optional.of(lease) : Optional.empty();
    }

    private void unlocked(TaskLock task) {
        stateLock.lock();
        try {
            if (state != State.RUNNING || current != task) {
                LOG.debug("ShedLock lock '{}' unlocked after it was freed (lockAtMostFor passed, or lost)", name);
                return;
            }
            cancelDeadline();
            provider.forget(this);
            Duration left =
                    Duration.between(ClockProvider.now(), task.configuration().getLockAtLeastUntil());
            if (left.isNegative() || left.isZero() || !lease.isValid()) {
                release();
                return;
            }
            state = State.KEPT;
            deadline = provider.schedule(this::keptTimeOver, left);
        } finally {
            stateLock.unlock();
        }
    }

    private Optional<SimpleLock> extended(TaskLock task, LockConfiguration next) {
        stateLock.lock();
        try {
            if (state != State.RUNNING || current != task) {
                return Optional.empty();
            }
            cancelDeadline();
            boolean pastLockAtMostFor = !provider.renewsPastLockAtMostFor()
                    && !ClockProvider.now().isBefore(task.configuration().getLockAtMostUntil());
            if (pastLockAtMostFor || !lease.isValid()) {
                provider.forget(this);
                release();
                return Optional.empty();
            }
            current = new TaskLock(next);
            armLockAtMostFor(current);
            return Optional.of(current);
        } finally {
            stateLock.unlock();
        }
    }

    private void armLockAtMostFor(TaskLock task) {
        if (!provider.renewsPastLockAtMostFor()) {
            Duration left =
                    Duration.between(ClockProvider.now(), task.configuration().getLockAtMostUntil());
            deadline = provider.schedule(() -> lockAtMostForOver(task), left);
        }
    }

    private void lockAtMostForOver(TaskLock task) {
        stateLock.lock();
        try {
            if (state != State.RUNNING || current != task) {
                return;
            }
            LOG.warn(
                    "ShedLock lock '{}' reached its lockAtMostFor ({}) while its task still ran: released, as ShedLock"
                            + " does, so another instance may run the task now. Give it a longer lockAtMostFor, or build"
                            + " the provider with renewPastLockAtMostFor(true) to keep it while the task runs",
                    name,
                    task.configuration().getLockAtMostFor());
            provider.forget(this);
            release();
        } finally {
            stateLock.unlock();
        }
    }

    private void keptTimeOver() {
        stateLock.lock();
        try {
            if (state == State.KEPT) {
                release();
            }
        } finally {
            stateLock.unlock();
        }
    }

    /** Told by the lease, on a Cerberus event thread. */
    void lost(Lease lost, LockLostException reason) {
        boolean running;
        stateLock.lock();
        try {
            running = state == State.RUNNING;
            if (state == State.DONE) {
                return;
            }
        } finally {
            stateLock.unlock();
        }
        if (running) {
            LOG.error(
                    "ShedLock lock '{}' (Cerberus lock '{}') was lost while its task ran, so another instance may"
                            + " run the task now: {}",
                    name,
                    provider.cerberusName(name),
                    reason.getMessage());
        } else {
            LOG.warn("ShedLock lock '{}' was lost while kept for its lockAtLeastFor: {}", name, reason.getMessage());
        }
        LeaseLossListener listener = provider.lossListener();
        if (listener != null && running) {
            try {
                listener.leaseLost(lost, reason);
            } catch (RuntimeException e) {
                LOG.error("the loss listener of ShedLock lock '{}' threw", name, e);
            }
        }
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    /** Releases the lease; the hold is DONE whatever the answer. Called with {@code stateLock} held. */
    private void release() {
        state = State.DONE;
        cancelDeadline();
        try {
            lease.close();
        } catch (LockLostException e) {
            LOG.debug("ShedLock lock '{}' had been lost before its release (reported then)", name);
        } catch (CerberusException e) {
            LOG.warn(
                    "could not release ShedLock lock '{}': {}; the engine frees it when its lease ({}) runs out",
                    name,
                    e.getMessage(),
                    lease.leaseTime());
        }
    }

    /** What a task holds: ShedLock's use-once rules come from {@link AbstractSimpleLock}. */
    private final class TaskLock extends AbstractSimpleLock {
        TaskLock(LockConfiguration configuration) {
            super(configuration);
        }

        LockConfiguration configuration() {
            return lockConfiguration;
        }

        @Override
        protected void doUnlock() {
            unlocked(this);
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration next) {
            return extended(this, next);
        }
    }
}
