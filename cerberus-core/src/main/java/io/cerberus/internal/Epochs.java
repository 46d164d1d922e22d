package io.cerberus.internal;

import io.cerberus.Fence;
import io.cerberus.LockLostException;
import io.cerberus.spi.KeepsEpochs;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client's side of the epochs that order fences across engine switches ({@link KeepsEpochs}): the largest epoch it
 * has seen on any engine, and the raise it owes each engine it switched to.
 *
 * <p>Invariants. A switch to an engine owes it a raise above the largest epoch seen so far, recorded before the
 * switch takes effect, so no fence of a hold on that engine is made before the raise; an engine's epochs are its own
 * residue modulo the number of engines, so no two engines ever share one. A hold's fence
 * carries the epoch read (or raised) while the hold is held, which the hold's validity after the read shows: the
 * holds of one lock are disjoint in time on an engine, so their epochs never go down in the order they were held,
 * and their tokens go up. The epoch is read once per hold, when its fence is first asked for, never on the acquire
 * path.
 */
final class Epochs {
    private final String namespace;
    private final AtomicLong seen = new AtomicLong();
    /** Engine name → the least epoch a switch to it owes it, until a raise there succeeds. */
    private final Map<String, Long> owed = new ConcurrentHashMap<>();

    Epochs(String namespace) {
        this.namespace = namespace;
    }

    /**
     * The client is about to send new acquisitions to {@code to}: its next fence comes after every one seen. The epoch
     * owed is the least above every epoch seen that belongs to {@code to}: engine {@code index} of {@code count} only
     * takes epochs equal to {@code index} modulo {@code count}, so two engines never share an epoch, and their tokens,
     * which are not comparable, are never compared (a client that saw too little raises too little: its fences are
     * then older than the other engine's, and refused, never taken for newer).
     *
     * @param index the engine's place in the client's list, the same in every client
     * @param count how many engines the client has
     */
    void switchingTo(EngineHandle to, int index, int count) {
        owed.put(to.name(), epochOf(index, count, seen.get()));
    }

    /** @return the least epoch above {@code seen} that is {@code index} modulo {@code count} */
    static long epochOf(int index, int count, long seen) {
        long next = seen + 1;
        return next + Math.floorMod(index - next, (long) count);
    }

    /**
     * @return the fence of a held lease: its engine's epoch, raised first if a switch owes that, and its token
     * @throws LockLostException if the hold was no longer valid when the epoch came back: the epoch may be younger
     *     than the hold, so no fence is given
     * @throws io.cerberus.EngineUnavailableException if the engine cannot be reached
     */
    Fence fence(Holding hold) {
        long token = hold.fencingToken();
        KeepsEpochs epochs = hold.engine.engine().ability(KeepsEpochs.class).orElse(null);
        if (epochs == null) {
            return new Fence(0, token);
        }
        Long raise = owed.get(hold.engine.name());
        long epoch = raise == null ? epochs.epoch(namespace) : epochs.raiseEpoch(namespace, raise);
        if (raise != null) {
            owed.remove(hold.engine.name(), raise);
        }
        seen.accumulateAndGet(epoch, Math::max);
        if (!hold.isValid()) {
            throw new LockLostException(hold.described() + " on engine '" + hold.engine.name()
                    + "' was no longer held when its epoch was read, so it has no fence: it may have passed to another"
                    + " holder");
        }
        return new Fence(epoch, token);
    }
}
