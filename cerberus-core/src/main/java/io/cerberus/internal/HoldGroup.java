package io.cerberus.internal;

import io.cerberus.CerberusException;
import io.cerberus.LockLostException;
import io.cerberus.spi.support.Arguments;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * Holds taken as one (a multi-lock's members, a semaphore's permits): lost together, released
 * together in the reverse of the order they were taken.
 *
 * <p>Invariants: the group's loss is recorded once, by the first member whose lease is lost, and
 * every listener is told it exactly once (on the client's event thread); {@link #release()} gives
 * back every member even when some fail, and throws the first failure with the others suppressed.
 */
final class HoldGroup {
    private static final System.Logger LOG = System.getLogger(HoldGroup.class.getName());

    /** The first member lost and why. */
    record Loss(Holding member, LockLostException reason) {}

    private final CerberusClient client;
    private final List<Holding> members;
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by lock. */
    private final List<BiConsumer<Holding, LockLostException>> listeners = new ArrayList<>();
    /** Written under lock. */
    private volatile Loss loss;

    /** @param members the holds, in the order they were taken */
    HoldGroup(CerberusClient client, List<Holding> members) {
        this.client = client;
        this.members = List.copyOf(members);
        for (Holding member : this.members) {
            member.onLost((lease, reason) -> memberLost(member, reason));
        }
    }

    List<Holding> members() {
        return members;
    }

    boolean isValid() {
        if (loss != null) {
            return false;
        }
        for (Holding member : members) {
            if (!member.isValid()) {
                return false;
            }
        }
        return true;
    }

    /** Registers a listener told once of the group's loss; at once, on the event thread, if it is lost already. */
    void onLost(String what, BiConsumer<Holding, LockLostException> listener) {
        Arguments.notNull("listener", listener);
        Loss already;
        lock.lock();
        try {
            already = loss;
            if (already == null) {
                listeners.add(listener);
            }
        } finally {
            lock.unlock();
        }
        if (already != null) {
            client.events().run("a loss listener of " + what, () -> listener.accept(already.member, already.reason));
        }
    }

    /** Called on the event thread by the member's own loss notice. */
    private void memberLost(Holding member, LockLostException reason) {
        List<BiConsumer<Holding, LockLostException>> told;
        lock.lock();
        try {
            if (loss != null) {
                return;
            }
            loss = new Loss(member, reason);
            told = List.copyOf(listeners);
            listeners.clear();
        } finally {
            lock.unlock();
        }
        for (BiConsumer<Holding, LockLostException> listener : told) {
            try {
                listener.accept(member, reason);
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "a loss listener of " + member.described() + " threw", e);
            }
        }
    }

    /** Releases every member, the last taken first; throws the first failure, the others suppressed. */
    void release() {
        RuntimeException first = null;
        for (int i = members.size() - 1; i >= 0; i--) {
            try {
                members.get(i).release();
            } catch (CerberusException | IllegalMonitorStateException | IllegalStateException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    CompletableFuture<Void> releaseAsync() {
        CompletableFuture<Void> released = new CompletableFuture<>();
        client.async.execute(() -> {
            try {
                release();
                released.complete(null);
            } catch (RuntimeException | Error e) {
                released.completeExceptionally(e);
            }
        });
        return released;
    }

    /** Gives back holds never handed to a caller (an all-or-nothing take that fell short), the last first. */
    static void giveBack(List<Holding> taken) {
        for (int i = taken.size() - 1; i >= 0; i--) {
            Holding holding = taken.get(i);
            try {
                holding.release();
            } catch (RuntimeException e) {
                LOG.log(
                        Level.DEBUG,
                        "giving back " + holding.described() + ", taken by an acquisition that fell short: "
                                + e.getMessage());
            }
        }
        taken.clear();
    }
}
