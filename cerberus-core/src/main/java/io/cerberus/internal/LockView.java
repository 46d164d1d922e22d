package io.cerberus.internal;

import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.LockTimeoutException;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Function;

/** A {@link DistributedLock}: a light view of one lock of one client; all state is in the client. */
final class LockView implements DistributedLock {
    private final CerberusClient client;
    private final LockKey key;
    private final LockMode mode;

    LockView(CerberusClient client, LockKey key, LockMode mode) {
        this.client = client;
        this.key = key;
        this.mode = mode;
    }

    LockKey key() {
        return key;
    }

    LockMode mode() {
        return mode;
    }

    /** @return how messages name this lock: {@code lock 'x'}, or a semaphore's permit */
    String described() {
        return SemaphoreView.describe(key.name());
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    public void lock() {
        lockUninterruptibly(client.defaultLease(), true);
    }

    @Override
    public void lock(Duration leaseTime) {
        lockUninterruptibly(Checks.leaseTime(leaseTime), false);
    }

    private void lockUninterruptibly(Duration lease, boolean renewed) {
        try {
            client.lockForThread(this, lease, renewed, -1, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        client.lockForThread(this, client.defaultLease(), true, -1, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return client.lockForThread(this, client.defaultLease(), true, 0, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return client.lockForThread(this, client.defaultLease(), true, Checks.nanos("wait time", time, unit), true);
    }

    @Override
    public boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException {
        long waitNanos = Checks.nanos("wait time", waitTime, unit);
        Duration lease = Checks.leaseTime(Duration.ofNanos(Checks.nanos("lease time", leaseTime, unit)));
        return client.lockForThread(this, lease, false, waitNanos, true);
    }

    @Override
    public void unlock() {
        client.unlockForThread(this);
    }

    @Override
    public Lease acquire(Duration wait) throws InterruptedException {
        return acquire(Checks.waitTime(wait), client.defaultLease(), true);
    }

    @Override
    public Lease acquire(Duration wait, Duration leaseTime) throws InterruptedException {
        return acquire(Checks.waitTime(wait), Checks.leaseTime(leaseTime), false);
    }

    private Lease acquire(Duration wait, Duration lease, boolean renewed) throws InterruptedException {
        Holding holding = client.acquirer.acquire(
                AcquireRequest.startingNow(this, lease, renewed, Checks.nanos(wait), true, false));
        if (holding == null) {
            throw timedOut(wait);
        }
        return holding;
    }

    @Override
    public Optional<Lease> tryAcquire(Duration wait) throws InterruptedException {
        return Optional.ofNullable(client.acquirer.acquire(AcquireRequest.startingNow(
                this, client.defaultLease(), true, Checks.nanos(Checks.waitTime(wait)), true, false)));
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration wait) {
        Duration checked = Checks.waitTime(wait);
        return acquireAsync(checked, client.defaultLease(), true, holding -> orTimeout(holding, checked));
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration wait, Duration leaseTime) {
        Duration checked = Checks.waitTime(wait);
        return acquireAsync(checked, Checks.leaseTime(leaseTime), false, holding -> orTimeout(holding, checked));
    }

    @Override
    public CompletableFuture<Optional<Lease>> tryAcquireAsync(Duration wait) {
        return acquireAsync(Checks.waitTime(wait), client.defaultLease(), true, Optional::ofNullable);
    }

    private <T> CompletableFuture<T> acquireAsync(
            Duration wait, Duration lease, boolean renewed, Function<Holding, T> result) {
        client.ensureOpen();
        return client.acquirer.acquireAsync(
                AcquireRequest.startingNow(this, lease, renewed, Checks.nanos(wait), false, false), result);
    }

    private Lease orTimeout(Holding holding, Duration wait) {
        if (holding == null) {
            throw timedOut(wait);
        }
        return holding;
    }

    private LockTimeoutException timedOut(Duration wait) {
        return new LockTimeoutException("lock '" + name() + "' was still busy after waiting " + Durations.format(wait)
                + " on engine '" + client.currentEngine() + "' (" + client.currentEngineUri()
                + "); `cerberus inspect` shows who holds it");
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return client.threadHold(this) != null;
    }

    @Override
    public boolean isLocked() {
        return client.isLocked(this);
    }

    @Override
    public Lease lease() {
        Holding holding = client.threadHold(this);
        if (holding == null) {
            throw new IllegalMonitorStateException("thread '"
                    + Thread.currentThread().getName() + "' does not hold " + mode.label() + " lock '" + name() + "'");
        }
        return holding;
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed locks have no conditions: a condition needs release,"
                + " wait and re-acquire to be one atomic step across processes, which no engine offers;"
                + " wait on your own signal and re-acquire the lock instead");
    }

    @Override
    public String toString() {
        return mode.label() + " lock '" + name() + "'";
    }
}
