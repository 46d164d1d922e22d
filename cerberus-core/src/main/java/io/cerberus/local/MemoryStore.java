package io.cerberus.local;

import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state of a {@code mem:} store: the reference implementation of the engine contract.
 *
 * <p>One lock guards the whole store; each lock name has its own condition, so a release wakes
 * only the waiters of that name. Every mode is served first come, first served: an attempt that
 * finds the lock busy joins the name's queue, and is granted when the hold is compatible and no
 * incompatible attempt is ahead of it (a reader passes other readers, never a waiting writer).
 *
 * <p>Leases expire on this JVM's monotonic clock, the store's own clock; expired holds are purged
 * whenever their name is touched. An expiry signals nothing: a busy answer bounds the wait by the
 * holders' remaining lease, as a networked engine would. Queue entries not touched for
 * {@link #STALE_WAITER} are dropped, so a waiter that vanished never blocks the queue.
 */
final class MemoryStore {
    private static final Map<String, MemoryStore> STORES = new ConcurrentHashMap<>();
    private static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final Duration STALE_WAITER = Duration.ofSeconds(10);

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<LockKey, Resource> resources = new HashMap<>();
    private long lastFence;
    /** Epoch per namespace ({@link io.cerberus.spi.KeepsEpochs}); guarded by lock. */
    private final Map<String, Long> epochs = new HashMap<>();

    private final class Resource {
        final Condition changed = lock.newCondition();
        final Map<String, Hold> holds = new LinkedHashMap<>();
        final Map<String, Waiter> queue = new LinkedHashMap<>();
        /** Async waiters' callbacks, each called once at the next change. */
        final ChangeWatchers watchers = new ChangeWatchers(lock);

        long version;

        boolean isEmpty() {
            return holds.isEmpty() && queue.isEmpty();
        }

        void purge(long now) {
            holds.values().removeIf(hold -> now - hold.expiresAt >= 0);
            queue.values().removeIf(waiter -> now - waiter.touchedAt > STALE_WAITER.toNanos());
        }

        void changed() {
            version++;
            changed.signalAll();
            watchers.wakeAll();
        }
    }

    private record Hold(Acquisition attempt, long fence, long expiresAt) {}

    private static final class Waiter {
        final Acquisition attempt;
        long seenVersion;
        long touchedAt;

        Waiter(Acquisition attempt) {
            this.attempt = attempt;
        }
    }

    static MemoryStore named(String name) {
        return STORES.computeIfAbsent(name, n -> new MemoryStore());
    }

    long epoch(String namespace) {
        lock.lock();
        try {
            return epochs.getOrDefault(namespace, 0L);
        } finally {
            lock.unlock();
        }
    }

    long raiseEpoch(String namespace, long atLeast) {
        lock.lock();
        try {
            return epochs.merge(namespace, atLeast, Math::max);
        } finally {
            lock.unlock();
        }
    }

    AcquireResult tryAcquire(Acquisition attempt) {
        lock.lock();
        try {
            long now = System.nanoTime();
            Resource resource = resources.computeIfAbsent(attempt.key(), k -> new Resource());
            resource.purge(now);
            Hold mine = resource.holds.get(attempt.token());
            if (mine != null) {
                return AcquireResult.granted(mine.fence);
            }
            if (grantable(resource, attempt)) {
                if (resource.queue.remove(attempt.token()) != null) {
                    resource.changed();
                }
                long fence = ++lastFence;
                resource.holds.put(
                        attempt.token(),
                        new Hold(attempt, fence, now + attempt.lease().toNanos()));
                return AcquireResult.granted(fence);
            }
            Waiter waiter = resource.queue.computeIfAbsent(attempt.token(), t -> new Waiter(attempt));
            waiter.seenVersion = resource.version;
            waiter.touchedAt = now;
            long wait = MAX_WAIT_NANOS;
            for (Hold hold : resource.holds.values()) {
                wait = Math.min(wait, hold.expiresAt - now);
            }
            return AcquireResult.busy(Duration.ofNanos(Math.max(0, wait)));
        } finally {
            lock.unlock();
        }
    }

    private static boolean grantable(Resource resource, Acquisition attempt) {
        boolean shared = attempt.mode().isShared();
        for (Hold hold : resource.holds.values()) {
            if (!shared || !hold.attempt.mode().isShared()) {
                return false;
            }
        }
        for (Waiter ahead : resource.queue.values()) {
            if (ahead.attempt.token().equals(attempt.token())) {
                break;
            }
            if (!shared || !ahead.attempt.mode().isShared()) {
                return false;
            }
        }
        return true;
    }

    void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            Resource resource = resources.get(attempt.key());
            Waiter waiter = resource == null ? null : resource.queue.get(attempt.token());
            if (waiter == null || waiter.seenVersion != resource.version) {
                return;
            }
            waiter.touchedAt = System.nanoTime();
            resource.changed.awaitNanos(Math.min(max.toNanos(), STALE_WAITER.toNanos() / 2));
            waiter.touchedAt = System.nanoTime();
        } finally {
            lock.unlock();
        }
    }

    /** As {@link #awaitChange}, by a callback: {@code wake} is called at the next change of the attempt's lock. */
    NotifiesChanges.ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        lock.lock();
        try {
            Resource resource = resources.get(attempt.key());
            Waiter waiter = resource == null ? null : resource.queue.get(attempt.token());
            if (waiter != null && waiter.seenVersion == resource.version) {
                waiter.touchedAt = System.nanoTime();
                return resource.watchers.add(wake);
            }
        } finally {
            lock.unlock();
        }
        wake.run();
        return () -> {};
    }

    void abandon(Acquisition attempt) {
        lock.lock();
        try {
            Resource resource = resources.get(attempt.key());
            if (resource == null) {
                return;
            }
            boolean changed = resource.queue.remove(attempt.token()) != null;
            changed |= resource.holds.remove(attempt.token()) != null;
            if (changed) {
                resource.changed();
            }
            dropIfEmpty(attempt.key(), resource);
        } finally {
            lock.unlock();
        }
    }

    boolean renew(Acquisition attempt) {
        lock.lock();
        try {
            long now = System.nanoTime();
            Resource resource = resources.get(attempt.key());
            if (resource == null) {
                return false;
            }
            resource.purge(now);
            Hold hold = resource.holds.get(attempt.token());
            if (hold == null) {
                dropIfEmpty(attempt.key(), resource);
                return false;
            }
            resource.holds.put(
                    attempt.token(),
                    new Hold(attempt, hold.fence, now + attempt.lease().toNanos()));
            return true;
        } finally {
            lock.unlock();
        }
    }

    boolean release(Acquisition attempt) {
        lock.lock();
        try {
            Resource resource = resources.get(attempt.key());
            if (resource == null) {
                return false;
            }
            resource.purge(System.nanoTime());
            boolean held = resource.holds.remove(attempt.token()) != null;
            resource.changed();
            dropIfEmpty(attempt.key(), resource);
            return held;
        } finally {
            lock.unlock();
        }
    }

    boolean isLocked(LockKey key) {
        lock.lock();
        try {
            Resource resource = resources.get(key);
            if (resource == null) {
                return false;
            }
            resource.purge(System.nanoTime());
            return !resource.holds.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    boolean forceRelease(LockKey key, long fencingToken) {
        lock.lock();
        try {
            Resource resource = resources.get(key);
            if (resource == null) {
                return false;
            }
            resource.purge(System.nanoTime());
            boolean freed = resource.holds.values().removeIf(hold -> hold.fence == fencingToken);
            if (freed) {
                resource.changed();
            }
            dropIfEmpty(key, resource);
            return freed;
        } finally {
            lock.unlock();
        }
    }

    List<LockInfo> inspect(String namespace, String prefix) {
        lock.lock();
        try {
            long now = System.nanoTime();
            List<LockInfo> infos = new ArrayList<>();
            for (Iterator<Map.Entry<LockKey, Resource>> it =
                            resources.entrySet().iterator();
                    it.hasNext(); ) {
                Map.Entry<LockKey, Resource> entry = it.next();
                LockKey key = entry.getKey();
                Resource resource = entry.getValue();
                resource.purge(now);
                if (resource.isEmpty()) {
                    it.remove();
                    continue;
                }
                if (!key.namespace().equals(namespace) || !key.name().startsWith(prefix)) {
                    continue;
                }
                for (Hold hold : resource.holds.values()) {
                    infos.add(new LockInfo(
                            key.name(),
                            hold.attempt.mode().label(),
                            hold.attempt.holder(),
                            hold.fence,
                            Optional.of(Duration.ofNanos(Math.max(0, hold.expiresAt - now))),
                            resource.queue.size()));
                }
            }
            return infos;
        } finally {
            lock.unlock();
        }
    }

    private void dropIfEmpty(LockKey key, Resource resource) {
        if (resource.isEmpty() && !lock.hasWaiters(resource.changed)) {
            resources.remove(key);
        }
    }
}
