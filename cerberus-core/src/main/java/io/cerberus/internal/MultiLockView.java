package io.cerberus.internal;

import io.cerberus.Lease;
import io.cerberus.LeaseLossListener;
import io.cerberus.LockTimeoutException;
import io.cerberus.MultiLease;
import io.cerberus.MultiLock;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A {@link MultiLock}: its members' exclusive locks, sorted by name, taken one by one with what is
 * left of the caller's wait, each through the client's {@link Acquirer} (so each member has the
 * lock's renewal, loss, fencing and waiting line). Ordered taking is what makes it deadlock-free:
 * every client waits for the members in the same order, so no two wait for each other. A member
 * that cannot be taken gives back those taken before it, the last first.
 */
final class MultiLockView implements MultiLock {
    private final CerberusClient client;
    /** The members, sorted by name, without repeats. */
    private final List<LockView> members;

    MultiLockView(CerberusClient client, List<LockView> members) {
        this.client = client;
        this.members = List.copyOf(members);
    }

    @Override
    public List<String> names() {
        return members.stream().map(LockView::name).toList();
    }

    @Override
    public MultiLease acquire(Duration wait) throws InterruptedException {
        return orTimeout(take(Checks.waitTime(wait), client.defaultLease(), true), wait);
    }

    @Override
    public MultiLease acquire(Duration wait, Duration leaseTime) throws InterruptedException {
        return orTimeout(take(Checks.waitTime(wait), Checks.leaseTime(leaseTime), false), wait);
    }

    @Override
    public Optional<MultiLease> tryAcquire(Duration wait) throws InterruptedException {
        return Optional.ofNullable(take(Checks.waitTime(wait), client.defaultLease(), true));
    }

    @Override
    public CompletableFuture<MultiLease> acquireAsync(Duration wait) {
        Duration checked = Checks.waitTime(wait);
        return takeAsync(checked, hold -> orTimeout(hold, checked));
    }

    @Override
    public CompletableFuture<Optional<MultiLease>> tryAcquireAsync(Duration wait) {
        return takeAsync(Checks.waitTime(wait), Optional::ofNullable);
    }

    private MultiHold take(Duration wait, Duration lease, boolean renewed) throws InterruptedException {
        client.ensureOpen();
        long start = System.nanoTime();
        long waitNanos = Checks.nanos(wait);
        List<Holding> taken = new ArrayList<>();
        boolean done = false;
        try {
            for (LockView member : members) {
                Holding holding = client.acquirer.acquire(
                        AcquireRequest.startingNow(member, lease, renewed, left(start, waitNanos), true, false));
                if (holding == null) {
                    return null;
                }
                taken.add(holding);
            }
            done = true;
            return new MultiHold(client, taken);
        } finally {
            if (!done) {
                HoldGroup.giveBack(taken);
            }
        }
    }

    /**
     * The async form of {@link #take}: each member's acquisition starts when the one before it
     * ends. The returned future is cancelled from outside as the lock's is: the member under way is
     * withdrawn and those taken are given back.
     *
     * @param value the future's value from the hold, or from null when the wait ran out (may throw)
     */
    private <T> CompletableFuture<T> takeAsync(Duration wait, Function<MultiHold, T> value) {
        client.ensureOpen();
        long start = System.nanoTime();
        long waitNanos = Checks.nanos(wait);
        Duration lease = client.defaultLease();
        CompletableFuture<T> result = new CompletableFuture<>();
        AtomicReference<CompletableFuture<Holding>> current = new AtomicReference<>();
        List<Holding> taken = new ArrayList<>(); // touched by one member's callback at a time
        result.whenComplete((hold, failure) -> {
            CompletableFuture<Holding> underWay = current.get();
            if (underWay != null) {
                underWay.cancel(false);
            }
        });
        takeNextAsync(0, start, waitNanos, lease, taken, current, result, value);
        return result;
    }

    private <T> void takeNextAsync(
            int index,
            long start,
            long waitNanos,
            Duration lease,
            List<Holding> taken,
            AtomicReference<CompletableFuture<Holding>> current,
            CompletableFuture<T> result,
            Function<MultiHold, T> value) {
        if (index == members.size()) {
            deliver(result, value, new MultiHold(client, taken), taken);
            return;
        }
        CompletableFuture<Holding> member = client.acquirer.acquireAsync(
                AcquireRequest.startingNow(members.get(index), lease, true, left(start, waitNanos), false, false),
                holding -> holding);
        current.set(member);
        if (result.isDone()) {
            member.cancel(false);
        }
        member.whenComplete((holding, failure) -> {
            if (holding != null) {
                taken.add(holding);
            }
            if (failure != null || holding == null || result.isDone()) {
                HoldGroup.giveBack(taken);
                if (failure != null && !(failure instanceof CancellationException)) {
                    result.completeExceptionally(failure);
                } else if (!result.isDone()) {
                    deliver(result, value, null, taken);
                }
                return;
            }
            takeNextAsync(index + 1, start, waitNanos, lease, taken, current, result, value);
        });
    }

    /** Completes the future with the hold's value; what the future cannot take is given back. */
    private static <T> void deliver(
            CompletableFuture<T> result, Function<MultiHold, T> value, MultiHold hold, List<Holding> taken) {
        boolean delivered;
        try {
            delivered = result.complete(value.apply(hold));
        } catch (RuntimeException e) {
            delivered = false;
            result.completeExceptionally(e);
        }
        if (!delivered) {
            HoldGroup.giveBack(taken);
        }
    }

    private static long left(long start, long waitNanos) {
        return Math.max(0, waitNanos - (System.nanoTime() - start));
    }

    private MultiHold orTimeout(MultiHold hold, Duration wait) {
        if (hold == null) {
            throw new LockTimeoutException("multi-lock " + names() + " could not take all of its locks within "
                    + Durations.format(wait) + " on engine '" + client.currentEngine() + "' ("
                    + client.currentEngineUri() + "); none is held; `cerberus inspect` shows who holds them");
        }
        return hold;
    }

    @Override
    public String toString() {
        return "multi-lock " + names();
    }

    /** A {@link MultiLease}: a {@link HoldGroup} of the members' holds. */
    static final class MultiHold implements MultiLease {
        private final HoldGroup group;

        MultiHold(CerberusClient client, List<Holding> members) {
            this.group = new HoldGroup(client, members);
        }

        @Override
        public List<Lease> leases() {
            return List.copyOf(group.members());
        }

        @Override
        public Lease lease(String name) {
            for (Holding member : group.members()) {
                if (member.lockName().equals(name)) {
                    return member;
                }
            }
            throw new IllegalArgumentException("'" + name + "' is not a member of this multi-lock; its members are "
                    + group.members().stream().map(Holding::lockName).toList());
        }

        @Override
        public boolean isValid() {
            return group.isValid();
        }

        @Override
        public void onLost(LeaseLossListener listener) {
            group.onLost(
                    "a multi-lock", listener == null ? null : (member, reason) -> listener.leaseLost(member, reason));
        }

        @Override
        public CompletableFuture<Void> releaseAsync() {
            return group.releaseAsync();
        }

        @Override
        public void close() {
            group.release();
        }

        @Override
        public String toString() {
            return "multi-lock hold "
                    + group.members().stream().map(Holding::lockName).toList() + (isValid() ? "" : " (not valid)");
        }
    }
}
