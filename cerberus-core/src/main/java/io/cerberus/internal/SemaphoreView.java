package io.cerberus.internal;

import io.cerberus.DistributedSemaphore;
import io.cerberus.LockTimeoutException;
import io.cerberus.Permits;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Durations;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A {@link DistributedSemaphore} made of slot locks: permit {@code i} of semaphore {@code S} is the
 * exclusive lock {@code U+001D "semaphore " S "#" i} (a name no lock name can be: lock names have no
 * control characters), so a held permit has everything a held lock has — renewal, expiry after a
 * crash, loss, a fencing token per slot, the lock-delay of a switch — on every engine.
 *
 * <p>Taking {@code n} permits: ask each slot once, from a random one, until {@code n} are taken (one
 * round trip per slot asked). Short of {@code n}, give back what was taken (all or nothing: a caller
 * never holds part while it waits) and wait in one busy slot's line, for a slice that grows from
 * 100 ms to 1 s, since a release of another slot sends it no signal; then ask again. The wait in a
 * line is the lock's own (a release there wakes the next waiter of that slot only), so a release
 * wakes one waiter, not all of them.
 */
final class SemaphoreView implements DistributedSemaphore {
    /** The most permits a semaphore may have: a full scan asks every slot once. */
    static final int MAX_PERMITS = 1000;

    private static final String SLOT_MARK = "\u001Dsemaphore ";
    /** Marks a slot of a name too long to embed, named by its SHA-256 instead. */
    private static final String HASHED_MARK = "\u001Esemaphore ";

    private static final long FIRST_SLICE_NANOS = 100_000_000L;
    private static final long MAX_SLICE_NANOS = 1_000_000_000L;

    private final CerberusClient client;
    private final String name;
    private final int permits;

    SemaphoreView(CerberusClient client, String name, int permits) {
        this.client = client;
        this.name = name;
        this.permits = permits;
    }

    /**
     * @param permits a semaphore's permits
     * @return them
     */
    static int checkPermits(int permits) {
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("permits must be 1 to " + MAX_PERMITS + ", was " + permits);
        }
        return permits;
    }

    /** @return the lock name of a slot: never a name a user can give a lock, at most 512 characters */
    static String slotName(String semaphore, int slot) {
        String plain = SLOT_MARK + semaphore + "#" + slot;
        if (plain.length() <= Checks.MAX_LOCK_NAME) {
            return plain;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(semaphore.getBytes(StandardCharsets.UTF_8));
            return HASHED_MARK + HexFormat.of().formatHex(digest) + "#" + slot;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * @param lockName the name of a lock, a slot's or a user's
     * @return how messages name it: {@code lock 'x'}, or {@code permit 2 of semaphore 'y'}
     */
    static String describe(String lockName) {
        for (String mark : new String[] {SLOT_MARK, HASHED_MARK}) {
            int hash = lockName.lastIndexOf('#');
            if (lockName.startsWith(mark) && hash > mark.length()) {
                String semaphore = lockName.substring(mark.length(), hash);
                return "permit " + lockName.substring(hash + 1) + " of semaphore "
                        + (mark == SLOT_MARK
                                ? "'" + semaphore + "'"
                                : "whose name has the SHA-256 " + semaphore.substring(0, 12) + "...");
            }
        }
        return "lock '" + lockName + "'";
    }

    private LockView slot(int slot) {
        return new LockView(client, new LockKey(client.namespace(), slotName(name, slot)), LockMode.EXCLUSIVE);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public Permits acquire(int count, Duration wait) throws InterruptedException {
        return orTimeout(take(checkCount(count), Checks.waitTime(wait), client.defaultLease(), true), count, wait);
    }

    @Override
    public Permits acquire(int count, Duration wait, Duration leaseTime) throws InterruptedException {
        return orTimeout(
                take(checkCount(count), Checks.waitTime(wait), Checks.leaseTime(leaseTime), false), count, wait);
    }

    @Override
    public Optional<Permits> tryAcquire(int count, Duration wait) throws InterruptedException {
        return Optional.ofNullable(take(checkCount(count), Checks.waitTime(wait), client.defaultLease(), true));
    }

    @Override
    public CompletableFuture<Permits> acquireAsync(int count, Duration wait) {
        Duration checked = Checks.waitTime(wait);
        return takeAsync(checkCount(count), checked, hold -> orTimeout(hold, count, checked));
    }

    @Override
    public CompletableFuture<Optional<Permits>> tryAcquireAsync(int count, Duration wait) {
        return takeAsync(checkCount(count), Checks.waitTime(wait), Optional::ofNullable);
    }

    private int checkCount(int count) {
        if (count < 1 || count > permits) {
            throw new IllegalArgumentException("permit count must be 1 to the semaphore's " + permits + " permits, was "
                    + count + " (semaphore '" + name + "')");
        }
        return count;
    }

    /** One acquisition's view of the client's {@link LocalSlots}: its id, and its leaving them once. */
    private final class Local {
        final LocalSlots slots = client.enterSlots(name, permits);
        final long id = LocalSlots.newId();
        private final AtomicBoolean left = new AtomicBoolean();

        void leave() {
            if (left.compareAndSet(false, true)) {
                client.leaveSlots(name, permits);
            }
        }

        PermitsHold hold(List<PermitsHold.Slot> taken) {
            return new PermitsHold(client, name, taken, this::release);
        }

        /** A handle's end: its slots unmarked here (after the engine let them go), the client left. */
        void release(List<PermitsHold.Slot> slotsHeld) {
            for (PermitsHold.Slot slot : slotsHeld) {
                slots.clear(slot.slot(), id);
            }
            leave();
        }

        /** Gives back slots never handed to a caller, and unmarks them. */
        void giveBack(List<PermitsHold.Slot> taken) {
            List<PermitsHold.Slot> copy = List.copyOf(taken);
            HoldGroup.giveBack(
                    new ArrayList<>(copy.stream().map(PermitsHold.Slot::holding).toList()));
            for (PermitsHold.Slot slot : copy) {
                slots.clear(slot.slot(), id);
            }
            taken.clear();
        }

        /** @return the slot to wait for: one this client holds (its release comes here first), else any busy one */
        int slotToWaitFor(List<Integer> busy) {
            int local = slots.quietestMarked(busy);
            if (local >= 0) {
                return local;
            }
            return busy.isEmpty()
                    ? ThreadLocalRandom.current().nextInt(permits)
                    : busy.get(ThreadLocalRandom.current().nextInt(busy.size()));
        }

        /**
         * Asks each slot once, from a random one, until {@code count} are taken; a slot another
         * acquisition of this client holds or takes is not asked.
         *
         * @param skip a slot not to ask (held already), or -1
         * @param busy the slots found busy, here or in the engine, are added to it
         * @return the slots taken, at most {@code count}; given back if the scan fails
         */
        List<PermitsHold.Slot> scan(
                int count, Duration lease, boolean renewed, int skip, List<Integer> busy, boolean interruptible)
                throws InterruptedException {
            List<PermitsHold.Slot> taken = new ArrayList<>(count);
            int first = ThreadLocalRandom.current().nextInt(permits);
            try {
                for (int k = 0; k < permits && taken.size() < count; k++) {
                    int slot = (first + k) % permits;
                    if (slot == skip) {
                        continue;
                    }
                    if (!slots.mark(slot, id)) {
                        busy.add(slot);
                        continue;
                    }
                    Holding holding = null;
                    try {
                        holding = client.acquirer.acquire(
                                AcquireRequest.startingNow(slot(slot), lease, renewed, 0, interruptible, false));
                    } finally {
                        if (holding == null) {
                            slots.unmark(slot, id);
                        }
                    }
                    if (holding == null) {
                        busy.add(slot);
                    } else {
                        taken.add(new PermitsHold.Slot(slot, holding));
                    }
                }
                return taken;
            } catch (InterruptedException | RuntimeException | Error e) {
                giveBack(taken);
                throw e;
            }
        }

        /** Notes a slot granted after a wait for it as this acquisition's, whoever let it go. */
        PermitsHold.Slot granted(int slot, Holding holding) {
            slots.markGranted(slot, id);
            return new PermitsHold.Slot(slot, holding);
        }
    }

    private PermitsHold take(int count, Duration wait, Duration lease, boolean renewed) throws InterruptedException {
        client.ensureOpen();
        long start = System.nanoTime();
        long waitNanos = Checks.nanos(wait);
        long slice = FIRST_SLICE_NANOS;
        Local local = new Local();
        boolean handedOut = false;
        try {
            while (true) {
                List<Integer> busy = new ArrayList<>();
                List<PermitsHold.Slot> taken = local.scan(count, lease, renewed, -1, busy, true);
                if (taken.size() == count) {
                    handedOut = true;
                    return local.hold(taken);
                }
                local.giveBack(taken);
                long left = left(start, waitNanos);
                if (left == 0) {
                    return null;
                }
                int slot = local.slotToWaitFor(busy);
                Holding waited;
                local.slots.waiting(slot, 1);
                try {
                    waited = client.acquirer.acquire(
                            AcquireRequest.startingNow(slot(slot), lease, renewed, Math.min(left, slice), true, false));
                } finally {
                    local.slots.waiting(slot, -1);
                }
                if (waited == null) {
                    slice = Math.min(2 * slice, MAX_SLICE_NANOS);
                    continue;
                }
                taken.add(local.granted(slot, waited));
                boolean done = false;
                try {
                    taken.addAll(local.scan(count - 1, lease, renewed, slot, new ArrayList<>(), true));
                    done = taken.size() == count;
                } finally {
                    if (!done) {
                        local.giveBack(taken);
                    }
                }
                if (done) {
                    handedOut = true;
                    return local.hold(taken);
                }
                slice = FIRST_SLICE_NANOS;
            }
        } finally {
            if (!handedOut) {
                local.leave();
            }
        }
    }

    /**
     * The async form of {@link #take}: scans run on the client's async pool, waits in a slot's line
     * hold no thread. Cancelling the returned future (or completing it from outside) withdraws the
     * wait under way and gives back what was taken.
     *
     * @param result the future's value from the hold, or from null when the wait ran out (may throw)
     */
    private <T> CompletableFuture<T> takeAsync(int count, Duration wait, Function<PermitsHold, T> result) {
        client.ensureOpen();
        AsyncTake<T> take = new AsyncTake<>(count, System.nanoTime(), Checks.nanos(wait), result);
        take.result.whenComplete((hold, failure) -> {
            CompletableFuture<Holding> underWay = take.waiting.get();
            if (underWay != null) {
                underWay.cancel(false);
            }
            if (!take.handedOut) {
                take.local.leave();
            }
        });
        client.async.execute(take::round);
        return take.result;
    }

    /** One async acquisition: a round is a scan, then a wait in a busy slot's line, then another round. */
    private final class AsyncTake<T> {
        final int count;
        final long start;
        final long waitNanos;
        final Function<PermitsHold, T> value;
        final Duration lease = client.defaultLease();
        final Local local = new Local();
        final CompletableFuture<T> result = new CompletableFuture<>();
        final AtomicReference<CompletableFuture<Holding>> waiting = new AtomicReference<>();
        long slice = FIRST_SLICE_NANOS;
        /** Set before the future is completed with a hold, which then leaves the local slots. */
        volatile boolean handedOut;

        AsyncTake(int count, long start, long waitNanos, Function<PermitsHold, T> value) {
            this.count = count;
            this.start = start;
            this.waitNanos = waitNanos;
            this.value = value;
        }

        void round() {
            if (result.isDone()) {
                return;
            }
            try {
                List<Integer> busy = new ArrayList<>();
                List<PermitsHold.Slot> taken = local.scan(count, lease, true, -1, busy, false);
                if (taken.size() == count) {
                    deliver(local.hold(taken));
                    return;
                }
                local.giveBack(taken);
                long left = left(start, waitNanos);
                if (left == 0) {
                    deliver(null);
                    return;
                }
                int slot = local.slotToWaitFor(busy);
                local.slots.waiting(slot, 1);
                CompletableFuture<Holding> waited = client.acquirer.acquireAsync(
                        AcquireRequest.startingNow(slot(slot), lease, true, Math.min(left, slice), false, false),
                        holding -> holding);
                waiting.set(waited);
                if (result.isDone()) {
                    waited.cancel(false);
                }
                waited.whenComplete((holding, failure) -> {
                    local.slots.waiting(slot, -1);
                    client.async.execute(() -> waited(slot, holding, failure));
                });
            } catch (InterruptedException e) {
                throw new AssertionError("an uninterruptible scan was interrupted", e);
            } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
            }
        }

        private void waited(int slot, Holding holding, Throwable failure) {
            List<PermitsHold.Slot> taken = new ArrayList<>();
            if (holding != null) {
                taken.add(local.granted(slot, holding));
            }
            if (failure != null || result.isDone()) {
                local.giveBack(taken);
                if (failure != null && !(failure instanceof CancellationException)) {
                    result.completeExceptionally(failure);
                }
                return;
            }
            if (holding == null) {
                slice = Math.min(2 * slice, MAX_SLICE_NANOS);
                round();
                return;
            }
            try {
                taken.addAll(local.scan(count - 1, lease, true, slot, new ArrayList<>(), false));
            } catch (InterruptedException e) {
                throw new AssertionError("an uninterruptible scan was interrupted", e);
            } catch (RuntimeException | Error e) {
                local.giveBack(taken);
                result.completeExceptionally(e);
                return;
            }
            if (taken.size() == count) {
                deliver(local.hold(taken));
                return;
            }
            local.giveBack(taken);
            slice = FIRST_SLICE_NANOS;
            round();
        }

        /** Completes the future with the hold's value; a hold the future cannot take is given back. */
        private void deliver(PermitsHold hold) {
            if (hold != null) {
                handedOut = true; // the hold leaves the local slots when it ends, given out or given back
            }
            boolean taken;
            try {
                taken = result.complete(value.apply(hold));
            } catch (RuntimeException e) {
                taken = false;
                result.completeExceptionally(e);
            }
            if (!taken && hold != null) {
                hold.giveBack();
            }
        }
    }

    private static long left(long start, long waitNanos) {
        return Math.max(0, waitNanos - (System.nanoTime() - start));
    }

    private PermitsHold orTimeout(PermitsHold hold, int count, Duration wait) {
        if (hold == null) {
            throw new LockTimeoutException("semaphore '" + name + "' had no " + count + " free permit"
                    + (count == 1 ? "" : "s") + " of " + permits + " within " + Durations.format(wait)
                    + " on engine '" + client.currentEngine() + "' (" + client.currentEngineUri()
                    + "); none is held; `cerberus inspect` lists the permits held");
        }
        return hold;
    }

    @Override
    public int availablePermits() {
        client.ensureOpen();
        int free = 0;
        for (int slot = 0; slot < permits; slot++) {
            if (!client.isLocked(slot(slot))) {
                free++;
            }
        }
        return free;
    }

    @Override
    public boolean release(String permitsId) {
        client.ensureOpen();
        boolean freed = false;
        for (long[] slotAndToken : PermitsHold.parseId(permitsId)) {
            int slot = (int) slotAndToken[0];
            freed |= client.forceRelease(
                    new LockKey(client.namespace(), slotName(name, slot)),
                    slotAndToken[1],
                    "permit " + slot + " of semaphore '" + name + "'");
        }
        return freed;
    }

    @Override
    public String toString() {
        return "semaphore '" + name + "' (" + permits + " permits)";
    }
}
