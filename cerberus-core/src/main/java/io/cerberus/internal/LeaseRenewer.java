package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.CerberusMetrics;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Renews the leases of held locks, and ends explicit leases, for one client: one thread and one
 * priority queue for all holds, however many.
 *
 * <p>A renewed hold is renewed every lease/3 (a third of its validity, on engines whose clocks may
 * drift: {@link io.cerberus.spi.LockEngine#validity}), counted from when the last successful request was
 * sent. Tasks due within lease/12 of each other are renewed together, one
 * {@link io.cerberus.spi.LockEngine#renewAll} call per engine, so engines that can batch (one
 * script, one pipeline) spend one round trip on many locks. A renewal the engine refuses marks
 * the lease lost at once. A renewal that fails to reach the engine (or meets any other failure of
 * the engine's, an {@link Error} included) is retried every lease/10 until the lease runs out on the
 * client's clock: the lease is invalid (uncertain) from the first failure, but marked lost (and its
 * listeners told) only when it runs out, because the engine may well still hold it.
 *
 * <p>Cancellation is synchronous: a task runs with its hold's state lock held, and release takes
 * the same lock, so after release no renewal is in flight or will be sent.
 */
final class LeaseRenewer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LeaseRenewer.class.getName());
    private static final long MIN_RETRY_NANOS = 20_000_000L;

    /** A scheduled renewal or expiry of one hold. */
    static final class Task {
        final Holding holding;
        final long dueNanos;
        final boolean expiry;
        private volatile boolean cancelled;

        Task(Holding holding, long dueNanos, boolean expiry) {
            this.holding = holding;
            this.dueNanos = dueNanos;
            this.expiry = expiry;
        }

        void cancel() {
            cancelled = true;
        }

        long slackNanos() {
            return holding.leaseTime().toNanos() / 12;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private final PriorityQueue<Task> queue = new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.dueNanos));
    private final Thread thread;
    private boolean closed;
    /**
     * When the renewer thread wakes by itself (monotonic clock; guarded by lock): a new task due
     * no earlier needs no signal, so taking and releasing locks in a loop wakes no thread.
     */
    private long wakesAtNanos;

    private boolean sleepsUntilSignalled;

    LeaseRenewer(String clientName) {
        thread = new Thread(this::run, "cerberus-lease-renewer-" + clientName);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Schedules the first task of a new hold: a renewal at lease/3, or the end of an explicit
     * lease. Holds that neither renew nor expire (session-bound) get none.
     */
    void start(Holding holding) {
        holding.stateLock.lock();
        try {
            if (!holding.isHeldLocked()) {
                return;
            }
            if (holding.renewed && !holding.engine.has(Capability.SESSION_BOUND)) {
                holding.task = schedule(holding, holding.validUntilNanos() - holding.validityNanos() * 2 / 3, false);
            } else if (!holding.renewed) {
                holding.task = schedule(holding, holding.validUntilNanos(), true);
            }
        } finally {
            holding.stateLock.unlock();
        }
    }

    private Task schedule(Holding holding, long dueNanos, boolean expiry) {
        Task task = new Task(holding, dueNanos, expiry);
        lock.lock();
        try {
            queue.add(task);
            if (queue.peek() == task && (sleepsUntilSignalled || dueNanos - wakesAtNanos < 0)) {
                wake.signal();
            }
        } finally {
            lock.unlock();
        }
        return task;
    }

    private void run() {
        while (true) {
            List<Task> batch;
            try {
                batch = nextBatch();
            } catch (InterruptedException e) {
                return;
            }
            if (batch == null) {
                return;
            }
            try {
                process(batch);
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "lease renewal failed unexpectedly; affected leases run out on their own", e);
            }
        }
    }

    private List<Task> nextBatch() throws InterruptedException {
        lock.lock();
        try {
            while (true) {
                if (closed) {
                    return null;
                }
                Task head = queue.peek();
                if (head == null) {
                    sleepsUntilSignalled = true;
                    wake.await();
                    sleepsUntilSignalled = false;
                    continue;
                }
                if (head.cancelled) {
                    queue.poll();
                    continue;
                }
                long delay = head.dueNanos - System.nanoTime();
                if (delay > 0) {
                    wakesAtNanos = head.dueNanos;
                    wake.awaitNanos(delay);
                    wakesAtNanos = System.nanoTime();
                    continue;
                }
                break;
            }
            List<Task> batch = new ArrayList<>();
            long now = System.nanoTime();
            while (!queue.isEmpty()) {
                Task next = queue.peek();
                if (!next.cancelled && next.dueNanos - now > next.slackNanos()) {
                    break;
                }
                queue.poll();
                if (!next.cancelled) {
                    batch.add(next);
                }
            }
            return batch;
        } finally {
            lock.unlock();
        }
    }

    private void process(List<Task> batch) {
        Map<EngineHandle, List<Task>> renewals = new LinkedHashMap<>();
        for (Task task : batch) {
            if (task.expiry) {
                expire(task);
            } else {
                renewals.computeIfAbsent(task.holding.engine, e -> new ArrayList<>())
                        .add(task);
            }
        }
        renewals.forEach(this::renew);
    }

    private void expire(Task task) {
        Holding holding = task.holding;
        holding.stateLock.lock();
        boolean lost;
        try {
            if (holding.task != task || !holding.isHeldLocked()) {
                return;
            }
            if (holding.engine.has(Capability.SESSION_BOUND)) {
                // the engine keeps session-bound holds for ever: end the explicit lease here
                try {
                    holding.engine.engine().release(holding.acquisition);
                } catch (RuntimeException | Error e) { // the hold is reported lost all the same
                    LOG.log(Level.WARNING, "could not release " + holding + " at the end of its lease", e);
                }
            }
            lost = holding.markLostLocked(
                    "its explicit lease of " + Durations.format(holding.leaseTime()) + " ended", null);
        } finally {
            holding.stateLock.unlock();
        }
        if (lost) {
            holding.fireLost();
        }
    }

    private void renew(EngineHandle engine, List<Task> tasks) {
        List<Holding> locked = new ArrayList<>();
        List<Holding> lost = new ArrayList<>();
        try {
            List<Acquisition> attempts = new ArrayList<>();
            for (Task task : tasks) {
                Holding holding = task.holding;
                holding.stateLock.lock();
                if (holding.task == task && holding.isHeldLocked()) {
                    locked.add(holding);
                    attempts.add(holding.acquisition);
                } else {
                    holding.stateLock.unlock();
                }
            }
            if (locked.isEmpty()) {
                return;
            }
            long sentAt = System.nanoTime();
            Set<Acquisition> refused;
            try {
                LockEngine store = engine.engine();
                refused = store.ability(RenewsInBatches.class)
                        .map(batch -> batch.renewAll(attempts))
                        .orElseGet(() -> RenewsInBatches.oneByOne(store, attempts));
            } catch (RuntimeException | Error e) {
                // an Error too (an engine's bug): the holds are retried and, if it lasts, lost and reported
                for (Holding holding : locked) {
                    retryOrLose(holding, e, lost);
                }
                locked.get(0)
                        .client
                        .metrics()
                        .renewals(engine, CerberusMetrics.RenewalOutcome.UNREACHABLE, locked.size());
                return;
            }
            int refusedCount = 0;
            for (Holding holding : locked) {
                if (refused.contains(holding.acquisition)) {
                    refusedCount++;
                    if (holding.markLostLocked(
                            "the engine refused to renew its lease (it had expired or was taken over)", null)) {
                        lost.add(holding);
                    }
                } else {
                    holding.extendedFrom(sentAt);
                    holding.task = schedule(holding, sentAt + holding.validityNanos() / 3, false);
                }
            }
            SafeMetrics metrics = locked.get(0).client.metrics();
            metrics.renewals(engine, CerberusMetrics.RenewalOutcome.REFUSED, refusedCount);
            metrics.renewals(engine, CerberusMetrics.RenewalOutcome.RENEWED, locked.size() - refusedCount);
        } finally {
            for (Holding holding : locked) {
                holding.stateLock.unlock();
            }
            for (Holding holding : lost) {
                holding.fireLost();
            }
        }
    }

    private void retryOrLose(Holding holding, Throwable failure, List<Holding> lost) {
        long now = System.nanoTime();
        long left = holding.validUntilNanos() - now;
        if (left <= 0) {
            int tries = holding.failedRenewals() + 1;
            if (holding.markLostLocked(
                    "its lease of " + Durations.format(holding.leaseTime())
                            + " ran out while the engine could not be reached to renew it (" + tries
                            + (tries == 1 ? " try" : " tries") + ")",
                    failure)) {
                lost.add(holding);
            }
            return;
        }
        long retry = Math.max(MIN_RETRY_NANOS, holding.leaseTime().toNanos() / 10);
        // one line per episode: the first failure says what happens next, the retries are details
        int failures = holding.renewalFailed();
        LOG.log(
                failures == 1 ? Level.WARNING : Level.DEBUG,
                "could not renew " + holding + " (" + failure + "); "
                        + (failures == 1
                                ? "retrying every " + Durations.format(Duration.ofNanos(retry))
                                        + " while its lease lasts, " + left / 1_000_000 + "ms more"
                                : "try " + failures + ", " + left / 1_000_000 + "ms of lease left"));
        holding.task = schedule(holding, now + Math.min(retry, left), false);
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            queue.clear();
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
