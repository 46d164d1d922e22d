package io.cerberus.internal;

import io.cerberus.Fence;
import io.cerberus.LockLostException;
import io.cerberus.Permit;
import io.cerberus.Permits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A {@link Permits} handle: a {@link HoldGroup} of slot holds. Its id lists each slot with the
 * fencing token of its hold ({@code "2:1734,5:1735"}), which is what a release by id from another
 * process names: a slot held since by someone else has a newer token and is left alone.
 */
final class PermitsHold implements Permits {
    /** One slot taken, and its hold. */
    record Slot(int slot, Holding holding) {}

    private final String semaphore;
    private final List<Slot> slots;
    private final HoldGroup group;
    /** Told once, when the permits are given back or lost: the client's note of the slots is cleared. */
    private final Consumer<List<Slot>> ended;

    private final AtomicBoolean over = new AtomicBoolean();

    /** @param ended told once, when the permits are given back or lost */
    PermitsHold(CerberusClient client, String semaphore, List<Slot> taken, Consumer<List<Slot>> ended) {
        this.semaphore = semaphore;
        this.group = new HoldGroup(client, taken.stream().map(Slot::holding).toList());
        List<Slot> sorted = new ArrayList<>(taken);
        sorted.sort(Comparator.comparingInt(Slot::slot));
        this.slots = List.copyOf(sorted);
        this.ended = ended;
        group.onLost("the permits of semaphore '" + semaphore + "'", (member, reason) -> end());
    }

    private void end() {
        if (over.compareAndSet(false, true)) {
            ended.accept(slots);
        }
    }

    @Override
    public String semaphoreName() {
        return semaphore;
    }

    @Override
    public int count() {
        return slots.size();
    }

    @Override
    public List<Permit> permits() {
        return slots.stream()
                .<Permit>map(slot -> new SlotPermit(semaphore, slot))
                .toList();
    }

    @Override
    public String id() {
        StringBuilder id = new StringBuilder();
        for (Slot slot : slots) {
            if (id.length() > 0) {
                id.append(',');
            }
            id.append(slot.slot).append(':').append(slot.holding.fencingToken());
        }
        return id.toString();
    }

    /**
     * @param id a handle's {@link #id()}
     * @return its slots and tokens
     */
    static List<long[]> parseId(String id) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("permits id must not be empty; it is what Permits.id() gave");
        }
        List<long[]> parsed = new ArrayList<>();
        for (String part : id.split(",", -1)) {
            int colon = part.indexOf(':');
            try {
                int slot = Integer.parseInt(part.substring(0, Math.max(colon, 0)));
                long token = Long.parseLong(part.substring(colon + 1));
                if (colon > 0 && slot >= 0 && slot < SemaphoreView.MAX_PERMITS && token >= 0) {
                    parsed.add(new long[] {slot, token});
                    continue;
                }
            } catch (NumberFormatException e) {
                // refused below
            }
            throw new IllegalArgumentException("permits id must be what Permits.id() gave, slot:token pairs"
                    + " separated by commas (\"2:1734,5:1735\"), was \"" + id + "\"");
        }
        return parsed;
    }

    @Override
    public String engineName() {
        return slots.get(0).holding.engineName();
    }

    @Override
    public Duration leaseTime() {
        return slots.get(0).holding.leaseTime();
    }

    @Override
    public boolean isValid() {
        return group.isValid();
    }

    @Override
    public void onLost(Consumer<LockLostException> listener) {
        group.onLost(
                "the permits of semaphore '" + semaphore + "'",
                listener == null ? null : (member, reason) -> listener.accept(reason));
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        return group.releaseAsync().whenComplete((released, failure) -> end());
    }

    @Override
    public void close() {
        try {
            group.release();
        } finally {
            end();
        }
    }

    /** Gives the permits back quietly: a hold never handed to a caller. */
    void giveBack() {
        try {
            HoldGroup.giveBack(new ArrayList<>(group.members()));
        } finally {
            end();
        }
    }

    @Override
    public String toString() {
        return "permits " + slots.stream().map(Slot::slot).toList() + " of semaphore '" + semaphore + "'"
                + (isValid() ? "" : " (not valid)");
    }

    /** A {@link Permit}: one slot's hold. */
    private record SlotPermit(String semaphore, Slot held) implements Permit {
        @Override
        public int slot() {
            return held.slot;
        }

        @Override
        public long fencingToken() {
            return held.holding.fencingToken();
        }

        @Override
        public Fence fence() {
            return held.holding.fence();
        }

        @Override
        public String fenceName() {
            return semaphore + "#" + held.slot;
        }
    }
}
