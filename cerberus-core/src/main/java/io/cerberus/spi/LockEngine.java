package io.cerberus.spi;

import io.cerberus.Capability;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An open connection to a lock store: the required tier. Every operation is atomic and
 * owner-checked in the store; the core adds reentrancy, renewal, deadlines, interruption and
 * waiting in line. What an engine can do better than the core's default is a separate optional
 * ability it implements ({@link #ability}); a plain key-value store implements
 * {@link io.cerberus.spi.support.KeyValueStore} instead. Methods are called from many
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
     * Releases a hold if the attempt still holds it.
     *
     * @param attempt the holding attempt
     * @return {@code true} if it held and is now released, {@code false} if it no longer held
     *     (expired, taken over)
     */
    boolean release(Acquisition attempt);

    /**
     * @param key the lock
     * @return whether anyone holds the lock now
     */
    boolean isLocked(LockKey key);

    /**
     * Checks that the engine answers and that its server is set up to keep the guarantees, for
     * health endpoints and readiness probes ({@link io.cerberus.Cerberus#checkEngine}). The default
     * makes the light read the failover checks make ({@code isLocked(probe)}); an engine that reads
     * its server's settings (the Redis engine reads its eviction policy) reads them again here, so a
     * setting changed after start-up is seen.
     *
     * @param probe a lock name to read, in the client's namespace; no lock is taken
     * @return warnings about settings that weaken a guarantee and that the user accepted (or that
     *     could not be read), each one sentence naming the setting; empty when there is none
     * @throws io.cerberus.EngineUnavailableException if the engine does not answer within its timeout
     * @throws io.cerberus.UnsafeEngineException if a setting breaks a guarantee and was not accepted
     */
    default List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        return List.of();
    }

    /**
     * One of this engine's optional abilities, if it has it: {@link RenewsInBatches},
     * {@link LinesUpLocally}, {@link HandsOver}, {@link TakesTurns}, {@link Inspects}, {@link KeepsIdempotencyRecords},
     * {@link NotifiesChanges}, {@link ReleasesByForce}, {@link KeepsEpochs}.
     * The default answers by what the engine implements; an engine whose abilities depend on its
     * settings (hand-offs only without replica waits, say) or a wrapper of another engine answers
     * for itself.
     *
     * @param ability the ability's interface
     * @param <A> the ability
     * @return this engine as that ability, or empty
     */
    default <A> Optional<A> ability(Class<A> ability) {
        return ability.isInstance(this) ? Optional.of(ability.cast(this)) : Optional.empty();
    }

    /** Closes the connection. Holds not released are freed by the store when their leases end. */
    @Override
    void close();
}
