package io.cerberus.spi;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.UnsupportedCapabilityException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An open connection to a lock store. Every operation is atomic and owner-checked in the store;
 * the core adds reentrancy, renewal, deadlines and interruption. Methods are called from many
 * threads at once. Failures to reach the store throw {@link io.cerberus.EngineUnavailableException}
 * naming the redacted URI, within the connect timeout.
 */
public interface LockEngine extends AutoCloseable {

    /** @return the engine URI without any password, for messages and logs */
    String describe();

    /** @return what this engine can do */
    Set<Capability> capabilities();

    /**
     * How long after an acquire or renew request was sent the holder may count on its hold. The
     * core judges {@link io.cerberus.Lease#isValid()} and schedules renewals by it. The default is
     * the whole lease: the store started its countdown no earlier than the request was sent, on
     * one clock. An engine whose grant rests on several clocks (Redlock) returns less, by what
     * those clocks may drift apart during the lease.
     *
     * @param lease the lease asked for
     * @return a positive duration, at most {@code lease}
     */
    default Duration validity(Duration lease) {
        return lease;
    }

    /**
     * How long this engine keeps a hold after its holder falls silent (crashes, pauses, loses its
     * network), for {@link io.cerberus.Lease#silentHolderExpiry()}. The default: the lease on an
     * engine whose holds expire; empty on a {@link Capability#SESSION_BOUND} engine, whose holds
     * last as long as the holder's connection or process. An engine whose holds live with a
     * server-side session or lease (ZooKeeper, etcd) returns what the server granted, which may be
     * longer than asked.
     *
     * @param lease the lease of the hold
     * @return how long after the holder's last word the store frees the lock, or empty
     */
    default Optional<Duration> silentHolderExpiry(Duration lease) {
        return capabilities().contains(Capability.SESSION_BOUND) ? Optional.empty() : Optional.of(lease);
    }

    /**
     * Why this engine lacks a capability, for the message of the exception that refuses it (Redlock
     * says why it has no fencing tokens). The default has nothing to add.
     *
     * @param capability a capability not in {@link #capabilities()}
     * @return one or two sentences, or empty
     */
    default Optional<String> whyNot(Capability capability) {
        return Optional.empty();
    }

    /**
     * Tries once to take the lock. Must be safe to repeat with the same attempt: if the attempt
     * already holds the lock (a retry after a lost reply), it is granted again with the same
     * fencing token. An engine with queued waiting (fair, ZooKeeper-style) may enqueue the attempt
     * on a busy answer; the core then either tries again or calls {@link #abandon}.
     *
     * @param attempt the attempt
     * @return granted with a fencing token, or busy with a bound on how long to wait
     */
    AcquireResult tryAcquire(Acquisition attempt);

    /**
     * Whether the core should line up this client's waiters for an exclusive lock, so that only the
     * first of them asks the engine and a release in this client wakes the next one at once. Say
     * yes when exclusive waiters race in the store (each asks again when told of a release): then
     * a thread that releases and asks again cannot win against the waiters of its own client, and
     * a hand-off between them costs one acquire. An engine that queues waiters in the store (in
     * turn order) says no. The default is no.
     *
     * @return whether exclusive waiters of one client line up in the core
     */
    default boolean linesUpWaitersLocally() {
        return false;
    }

    /**
     * Waits until the lock of {@code attempt} may have changed (a release, an expiry, this
     * attempt's turn), or {@code max} has passed, whichever comes first. May return early for no
     * reason; must not busy-poll the store.
     *
     * @param attempt the waiting attempt
     * @param max the longest to wait
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    void awaitChange(Acquisition attempt, Duration max) throws InterruptedException;

    /**
     * The core gives the attempt up (timeout, interruption, failure): leave any queue, and if the
     * attempt was in fact granted (a reply lost), release it. Must not throw for an unknown
     * attempt.
     *
     * @param attempt the attempt given up
     */
    void abandon(Acquisition attempt);

    /**
     * Extends the lease of a held attempt to {@code attempt.lease()} from now, if it still holds.
     *
     * @param attempt the holding attempt
     * @return {@code true} if renewed, {@code false} if the attempt no longer holds the lock
     */
    boolean renew(Acquisition attempt);

    /**
     * Renews several holds, in as few round trips as the engine can. The default renews one by
     * one.
     *
     * @param attempts holding attempts
     * @return the attempts that no longer hold their lock (not renewed)
     */
    default Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
        Set<Acquisition> lost = new HashSet<>();
        for (Acquisition attempt : attempts) {
            if (!renew(attempt)) {
                lost.add(attempt);
            }
        }
        return lost;
    }

    /**
     * Releases a hold if the attempt still holds it.
     *
     * @param attempt the holding attempt
     * @return {@code true} if it held and is now released, {@code false} if it no longer held
     *     (expired, taken over)
     */
    boolean release(Acquisition attempt);

    /**
     * Whether {@link #handOver} hands a lock over in one request. Only an engine that
     * {@link #linesUpWaitersLocally lines up waiters locally} is asked. The default is no.
     *
     * @return whether this engine hands locks over
     */
    default boolean handsOver() {
        return false;
    }

    /**
     * Releases {@code holder}'s exclusive hold and grants the same lock to {@code next}, another
     * exclusive attempt of the same client, in one request: owner, lease and a new fencing token
     * for {@code next}, as a grant by {@link #tryAcquire} would give. The core calls it (for an
     * engine that {@link #handsOver}) in a release while {@code next} sleeps first in the client's
     * line for that lock, and no more than a few times in a row, so that other clients get their
     * turn; the engine may still decline (say, others queue in the store) and only release. The
     * default only releases.
     *
     * @param holder the releasing attempt
     * @param next the attempt to grant
     * @return what was done; never handed unless {@code holder} held
     */
    default HandOff handOver(Acquisition holder, Acquisition next) {
        return HandOff.notHanded(release(holder));
    }

    /**
     * @param key the lock
     * @return whether anyone holds the lock now
     */
    boolean isLocked(LockKey key);

    /**
     * Lists current holds, for engines with {@link Capability#INSPECT}.
     *
     * @param namespace the namespace to list
     * @param prefix a lock-name prefix, empty for all
     * @return the holds, in any order
     * @throws UnsupportedCapabilityException if the engine cannot list
     */
    default List<LockInfo> inspect(String namespace, String prefix) {
        throw new UnsupportedCapabilityException("engine " + describe() + " cannot list its locks");
    }

    /** Closes the connection. Holds not released are freed by the store when their leases end. */
    /**
     * The engine's idempotency store, if it has one (see {@link IdempotencyStore}).
     *
     * @return the store, or empty
     */
    default java.util.Optional<IdempotencyStore> idempotencyStore() {
        return java.util.Optional.empty();
    }

    @Override
    void close();
}
