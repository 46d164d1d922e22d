package io.cerberus.integration;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration lock registry backed by a {@link Cerberus} client, on whichever engine it
 * runs (Redis, ZooKeeper, etcd, SQL, file, mem): the drop-in replacement of
 * {@code RedisLockRegistry}, {@code JdbcLockRegistry} and {@code ZookeeperLockRegistry}, directly or
 * under {@code LockRegistryLeaderInitiator}.
 *
 * <p>The locks keep the contract of Spring Integration's registries: reentrant per thread, scoped
 * to this registry, {@code unlock()} by a thread that does not hold the lock throws
 * {@link IllegalStateException}, conditions are not supported. What differs: a lock taken without a
 * ttl is renewed by Cerberus every lease/3 for as long as it is held (the client's default lease,
 * {@code Cerberus.builder().defaultLease(..)}), so a crashed holder frees it within one lease; a
 * lock taken with a ttl is an explicit lease, never renewed; a lost lease is logged and the last
 * {@code unlock()} throws {@link java.util.ConcurrentModificationException}, as Spring Integration's
 * registries do when the store let the lock expire; {@link #lease(Object)} gives the hold's fencing
 * token.
 *
 * <p>Keys are non-blank {@link String}s, as for Spring Integration's distributed registries; the
 * Cerberus lock name is the key, or {@code registryKey:key}. The registry does not own the client:
 * close the {@link Cerberus} yourself. Thread-safe.
 */
public final class CerberusLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
    private final Cerberus cerberus;
    private final String prefix;
    private final ConcurrentMap<String, CerberusRegistryLock> locks = new ConcurrentHashMap<>();

    /**
     * A registry whose lock names are the keys themselves.
     *
     * @param cerberus the client the locks are taken with
     * @throws IllegalArgumentException if {@code cerberus} is {@code null}
     */
    public CerberusLockRegistry(Cerberus cerberus) {
        this(cerberus, null);
    }

    /**
     * A registry whose lock names are {@code registryKey:key}, as {@code RedisLockRegistry} names its
     * Redis keys: registries with different registry keys never share a lock.
     *
     * @param cerberus the client the locks are taken with
     * @param registryKey the prefix of every lock name, or {@code null} for none
     * @throws IllegalArgumentException if {@code cerberus} is {@code null} or {@code registryKey} is blank
     */
    public CerberusLockRegistry(Cerberus cerberus, String registryKey) {
        if (cerberus == null) {
            throw new IllegalArgumentException("the Cerberus client must not be null");
        }
        if (registryKey != null && registryKey.isBlank()) {
            throw new IllegalArgumentException("registry key must not be blank; pass null for lock names without one");
        }
        this.cerberus = cerberus;
        this.prefix = registryKey == null ? "" : registryKey + ":";
    }

    /**
     * The lock of {@code lockKey}, the same object for the same key until
     * {@link #expireUnusedOlderThan(long)} drops it. Its {@code lock()} and {@code tryLock(time, unit)}
     * take a renewed lease; {@code lock(ttl)} and {@code tryLock(wait, ttl)} an explicit one.
     *
     * @param lockKey a non-blank {@link String}
     * @return the lock
     * @throws IllegalArgumentException if the key is {@code null}, not a {@link String}, blank, or a
     *     name Cerberus refuses (too long, control characters)
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String key = checkedKey(lockKey);
        CerberusRegistryLock lock =
                locks.computeIfAbsent(key, k -> new CerberusRegistryLock(cerberus.lock(prefix + k), k));
        lock.touch();
        return lock;
    }

    /**
     * The lease of the current thread's hold of {@code lockKey}: its fencing token
     * ({@link Lease#fencingToken()}), fence, validity and loss listeners. Release the hold with
     * {@code unlock()}; closing this lease is refused.
     *
     * @param lockKey the key the lock was obtained with
     * @return the lease of the current thread's hold
     * @throws IllegalArgumentException if the key is not a valid key
     * @throws IllegalStateException if the current thread does not hold that lock of this registry
     */
    public Lease lease(Object lockKey) {
        return held(lockKey, "read its lease").lease();
    }

    /**
     * Drops the cached locks that no thread of this process holds and that were last obtained,
     * taken or released more than {@code age} milliseconds ago. A dropped lock object still works;
     * {@link #obtain(Object)} gives a new one for its key.
     *
     * @param age in milliseconds, not negative
     * @throws IllegalArgumentException if {@code age} is negative
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        if (age < 0) {
            throw new IllegalArgumentException("age must not be negative, was " + age + "ms");
        }
        long now = System.currentTimeMillis();
        locks.values().removeIf(lock -> now - lock.lastUsed() > age && !lock.isAcquiredInThisProcess());
    }

    /**
     * Confirms that the current thread holds the lock and that its lease is valid. There is nothing
     * to extend: Cerberus already renews a lock taken without a ttl every lease/3 while it is held.
     *
     * @param lockKey the key the lock was obtained with
     * @throws IllegalStateException if the current thread does not hold it, or its lease was lost
     * @throws UnsupportedOperationException if it was taken with a ttl (an explicit lease, not stretched)
     */
    @Override
    public void renewLock(Object lockKey) {
        held(lockKey, "renew it").confirmRenewable();
    }

    /**
     * As {@link #renewLock(Object)}: the ttl is checked but not applied, since the hold's lease is
     * renewed for as long as it is held, which outlasts any ttl; a crashed holder frees it within one
     * lease of the client.
     *
     * @param lockKey the key the lock was obtained with
     * @param ttl a positive duration
     * @throws IllegalArgumentException if {@code ttl} is not positive
     * @throws IllegalStateException if the current thread does not hold it, or its lease was lost
     * @throws UnsupportedOperationException if it was taken with a ttl (an explicit lease, not stretched)
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        if (ttl == null || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        renewLock(lockKey);
    }

    private CerberusRegistryLock held(Object lockKey, String what) {
        String key = checkedKey(lockKey);
        CerberusRegistryLock lock = locks.get(key);
        if (lock == null || !lock.isAcquiredInThisProcess()) {
            throw new IllegalStateException("thread '" + Thread.currentThread().getName() + "' does not hold lock '"
                    + key + "' of this registry: only its holder can " + what);
        }
        return lock;
    }

    private static String checkedKey(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lock key must not be null");
        }
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("lock key must be a String, as for Spring Integration's distributed"
                    + " registries, was a " + lockKey.getClass().getName()
                    + "; pass String.valueOf(key) if its toString() is the same in every process");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("lock key must not be blank, was '" + key + "'");
        }
        return key;
    }

    @Override
    public String toString() {
        return "CerberusLockRegistry{prefix='" + prefix + "', engine='" + cerberus.currentEngine() + "', cached="
                + locks.size() + "}";
    }
}
