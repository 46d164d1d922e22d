package io.cerberus.integration;

import io.cerberus.CerberusException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One lock of a {@link CerberusLockRegistry}, shaped as Spring Integration's own: a local
 * {@link ReentrantLock} keeps the per-thread ownership and the hold count, so only the first hold
 * of a thread reaches the engine (through the Cerberus lock's thread-bound facade, once) and only
 * the last unlock releases it; nested holds cost no round trip.
 *
 * <p>A lost lease (expired, renewal refused, session ended) is logged when Cerberus learns it. The
 * holder learns it at its next call: a nested {@code tryLock} returns {@code false} and a nested
 * {@code lock} throws, both ending the lost hold (so that {@code LockRegistryLeaderInitiator}
 * revokes leadership and competes again); the last {@code unlock()} throws
 * {@link ConcurrentModificationException}, as Spring Integration's registries do when the store
 * let the lock expire, with Cerberus's {@link LockLostException} as its cause.
 */
final class CerberusRegistryLock implements DistributedLock {
    private static final Logger LOG = LoggerFactory.getLogger(CerberusRegistryLock.class);

    private final io.cerberus.DistributedLock engineLock;
    private final String key;
    private final ReentrantLock local = new ReentrantLock();

    private volatile long lastUsed = System.currentTimeMillis();
    /** Whether the current hold was taken with a ttl (an explicit lease, not renewed). */
    private volatile boolean explicitLease;
    /** The thread whose lost hold was ended by a nested call, until its unlock reports it or it locks again. */
    private volatile Thread lostBy;

    private volatile LockLostException lostReason;

    CerberusRegistryLock(io.cerberus.DistributedLock engineLock, String key) {
        this.engineLock = engineLock;
        this.key = key;
    }

    @Override
    public void lock() {
        local.lock();
        if (nested(true)) {
            return;
        }
        first(null, () -> {
            engineLock.lock();
            return true;
        });
    }

    @Override
    public void lock(Duration ttl) {
        Duration checked = positive("ttl", ttl);
        local.lock();
        if (nested(true)) {
            return;
        }
        first(checked, () -> {
            engineLock.lock(checked);
            return true;
        });
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        if (nested(true)) {
            return;
        }
        first(null, () -> {
            engineLock.lockInterruptibly();
            return true;
        });
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return nested(false);
        }
        return first(null, engineLock::tryLock);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (time < 0) {
            throw new IllegalArgumentException("wait time must not be negative, was " + time + " " + unit);
        }
        return tryLock(System.nanoTime(), unit.toNanos(time), null);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        if (waitTime == null || waitTime.isNegative()) {
            throw new IllegalArgumentException("wait time must not be null or negative, was " + waitTime);
        }
        long start = System.nanoTime();
        return tryLock(start, nanos(waitTime), positive("ttl", ttl));
    }

    private boolean tryLock(long start, long waitNanos, Duration ttl) throws InterruptedException {
        if (!local.tryLock(waitNanos, TimeUnit.NANOSECONDS)) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return nested(false);
        }
        long left = Math.max(0, waitNanos - (System.nanoTime() - start));
        return first(
                ttl,
                () -> ttl == null
                        ? engineLock.tryLock(left, TimeUnit.NANOSECONDS)
                        : engineLock.tryLock(left, nanos(ttl), TimeUnit.NANOSECONDS));
    }

    @Override
    public void unlock() {
        Thread thread = Thread.currentThread();
        if (!local.isHeldByCurrentThread()) {
            if (lostBy == thread) {
                lostBy = null;
                throw lost(lostReason);
            }
            throw new IllegalStateException(
                    "thread '" + thread.getName() + "' does not hold lock '" + key + "': only its holder unlocks it");
        }
        lastUsed = System.currentTimeMillis();
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        try {
            engineLock.unlock();
        } catch (LockLostException e) {
            throw lost(e);
        } catch (CerberusException e) {
            throw new DataAccessResourceFailureException(
                    "Failed to release lock '" + key + "' (the engine frees it when its lease ends): " + e.getMessage(),
                    e);
        } finally {
            local.unlock();
        }
    }

    /**
     * Not supported, as in Spring Integration's registries: a condition would need release, wait and
     * re-acquire to be one atomic step across processes.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks: a condition"
                + " needs release, wait and re-acquire as one atomic step across processes, which no engine offers");
    }

    /** @return the lease of the current thread's hold; {@link IllegalStateException} if it holds none */
    Lease lease() {
        requireHeld("read its lease");
        return engineLock.lease();
    }

    /** What {@link CerberusLockRegistry#renewLock(Object, Duration)} checks: held here, valid, renewed. */
    void confirmRenewable() {
        requireHeld("renew it");
        Lease lease = engineLock.lease();
        if (!lease.isValid()) {
            throw new IllegalStateException(
                    "Could not renew lock '" + key + "': its lease was lost; unlock() will report the loss");
        }
        if (explicitLease) {
            throw new UnsupportedOperationException("Could not renew lock '" + key + "': it was taken with a ttl,"
                    + " an explicit lease that Cerberus does not stretch; take it without a ttl (lock(), tryLock(time,"
                    + " unit)) and Cerberus renews it every lease/3 for as long as it is held");
        }
        lastUsed = System.currentTimeMillis();
    }

    boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    long lastUsed() {
        return lastUsed;
    }

    void touch() {
        lastUsed = System.currentTimeMillis();
    }

    private void requireHeld(String what) {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("thread '" + Thread.currentThread().getName() + "' does not hold lock '"
                    + key + "': only its holder can " + what);
        }
    }

    /**
     * After the local lock was taken: if it is a nested hold, whether the hold is still good. A
     * lost hold is ended here (the caller learns it: {@code false}, or an exception if it must throw).
     */
    private boolean nested(boolean mustHold) {
        if (local.getHoldCount() == 1) {
            return false;
        }
        if (engineLock.lease().isValid()) {
            lastUsed = System.currentTimeMillis();
            return true;
        }
        endLostHold();
        if (mustHold) {
            throw lost(lostReason);
        }
        return false;
    }

    private void endLostHold() {
        LockLostException reason = null;
        try {
            engineLock.unlock();
        } catch (LockLostException e) {
            reason = e;
        } catch (RuntimeException e) {
            LOG.debug("lock '{}': ending a lost hold: {}", key, e.toString());
        }
        while (local.isHeldByCurrentThread()) {
            local.unlock();
        }
        lostReason = reason;
        lostBy = Thread.currentThread();
    }

    private <E extends Exception> boolean first(Duration ttl, EngineCall<E> call) throws E {
        boolean acquired = false;
        try {
            acquired = call.acquire();
        } catch (CerberusException e) {
            throw new CannotAcquireLockException("Failed to lock mutex at '" + key + "': " + e.getMessage(), e);
        } finally {
            if (!acquired) {
                local.unlock();
            }
        }
        if (!acquired) {
            return false;
        }
        lostBy = null;
        lostReason = null;
        explicitLease = ttl != null;
        lastUsed = System.currentTimeMillis();
        String holder = Thread.currentThread().getName();
        engineLock
                .lease()
                .onLost((lease, reason) -> LOG.warn(
                        "lock '{}' was lost while thread '{}' held it: {}; its unlock() will throw",
                        key,
                        holder,
                        reason.getMessage()));
        return true;
    }

    private ConcurrentModificationException lost(LockLostException reason) {
        ConcurrentModificationException e = new ConcurrentModificationException(
                "Lock '" + key + "' was lost while"
                        + " held (" + (reason == null ? "its lease ended" : reason.getMessage())
                        + "). The integrity of data"
                        + " protected by this lock may have been compromised; its fencing token lets the resource refuse stale writes.");
        if (reason != null) {
            e.initCause(reason);
        }
        return e;
    }

    private static Duration positive(String what, Duration amount) {
        if (amount == null || amount.isNegative() || amount.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + amount);
        }
        return amount;
    }

    private static long nanos(Duration amount) {
        try {
            return amount.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        return "CerberusRegistryLock '" + key + "' (" + (local.isLocked() ? "held in this process" : "free here") + ")";
    }

    @FunctionalInterface
    private interface EngineCall<E extends Exception> {
        boolean acquire() throws E;
    }
}
