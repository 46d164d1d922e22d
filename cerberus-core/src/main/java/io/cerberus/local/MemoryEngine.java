package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.ReleasesByForce;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** A client of a {@link MemoryStore}. Closing it releases nothing: the core releases first. */
final class MemoryEngine
        implements LockEngine, Inspects, KeepsIdempotencyRecords, NotifiesChanges, ReleasesByForce, KeepsEpochs {
    private final String uri;
    private final MemoryStore store;
    private final MemoryIdempotencyStore records;

    MemoryEngine(String uri, MemoryStore store) {
        this(uri, store, MemoryIdempotencyStore.named(uri));
    }

    MemoryEngine(String uri, MemoryStore store, MemoryIdempotencyStore records) {
        this.uri = uri;
        this.store = store;
        this.records = records;
    }

    @Override
    public String describe() {
        return uri;
    }

    @Override
    public Set<Capability> capabilities() {
        return MemoryEngineProvider.CAPABILITIES;
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        return store.tryAcquire(attempt);
    }

    @Override
    public long epoch(String namespace) {
        return store.epoch(namespace);
    }

    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        return store.raiseEpoch(namespace, atLeast);
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        store.awaitChange(attempt, max);
    }

    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        return store.onChange(attempt, wake);
    }

    @Override
    public void abandon(Acquisition attempt) {
        store.abandon(attempt);
    }

    @Override
    public boolean renew(Acquisition attempt) {
        return store.renew(attempt);
    }

    @Override
    public boolean release(Acquisition attempt) {
        return store.release(attempt);
    }

    @Override
    public boolean isLocked(LockKey key) {
        return store.isLocked(key);
    }

    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        return store.forceRelease(key, fencingToken);
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        return store.inspect(namespace, prefix);
    }

    @Override
    public void close() {
        // the store outlives its clients, as a server would
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return records;
    }
}
