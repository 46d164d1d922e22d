package io.cerberus;

/**
 * A fencing token with the epoch it was issued in, as a protected resource compares them: by epoch,
 * then by token. Within one epoch the tokens are those of one engine ({@link Lease#fencingToken()});
 * a resource that keeps the largest fence it has seen and refuses a write with a smaller one refuses
 * every holder whose hold has since passed to another.
 *
 * <p>The epoch orders the fences of different engines across a switch: each engine that keeps epochs
 * (the SPI's {@code KeepsEpochs}) raises its epoch when a client switches to it, above every epoch that
 * client has seen, so the holds granted there after a failover, and back on the first engine after a
 * fail-back, carry larger fences than those granted before ({@link Lease#fence()}; docs/FENCING.md says
 * exactly what the clients and the resource share). A client with one engine that was never switched to
 * sees epoch 0.
 *
 * @param epoch the period of the engine that issued the token; never negative
 * @param token the fencing token; never negative
 */
public record Fence(long epoch, long token) implements Comparable<Fence> {

    /** Checks the parts. */
    public Fence {
        if (epoch < 0 || token < 0) {
            throw new IllegalArgumentException(
                    "a fence's epoch and token must not be negative, were " + epoch + " and " + token);
        }
    }

    /**
     * @param lease a held lease on an engine with fencing tokens
     * @return its fence ({@link Lease#fence()}: the first call reads the engine's epoch)
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens
     * @throws LockLostException if the hold was no longer valid when its epoch was read
     */
    public static Fence of(Lease lease) {
        return lease.fence();
    }

    @Override
    public int compareTo(Fence other) {
        int byEpoch = Long.compare(epoch, other.epoch);
        return byEpoch != 0 ? byEpoch : Long.compare(token, other.token);
    }

    /**
     * @param other another fence
     * @return whether this fence is older than {@code other}: a write carrying it must be refused once
     *     {@code other} was seen
     */
    public boolean isOlderThan(Fence other) {
        return compareTo(other) < 0;
    }

    /** The bits of {@link #asLong()} that carry the token; the epoch is above them. */
    public static final int TOKEN_BITS = 52;

    /**
     * The fence as one {@code long}, for a resource that stores a single number: {@code epoch << 52 | token},
     * ordered as the fences are. It fits while the epoch is below 2048 and the token below 2<sup>52</sup> (etcd
     * revisions, SQL and {@code file:} counters, Redis's clock-seeded tokens until the year 2112, ZooKeeper's
     * while its own epoch is below 2<sup>20</sup>).
     *
     * @return the fence as one number
     * @throws ArithmeticException if it does not fit, naming the part that is too large
     */
    public long asLong() {
        if (token >= 1L << TOKEN_BITS) {
            throw new ArithmeticException("fence " + this + " has a token of 2^52 or more: it has no long form; store"
                    + " the epoch and the token");
        }
        if (epoch >= 1L << (Long.SIZE - 1 - TOKEN_BITS)) {
            throw new ArithmeticException("fence " + this + " has an epoch of 2048 or more: it has no long form; store"
                    + " the epoch and the token");
        }
        return epoch << TOKEN_BITS | token;
    }

    /**
     * @param value a fence's {@link #asLong()}, not negative
     * @return that fence
     * @throws IllegalArgumentException if it is negative
     */
    public static Fence ofLong(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("a fence's long form is not negative, was " + value);
        }
        return new Fence(value >>> TOKEN_BITS, value & ((1L << TOKEN_BITS) - 1));
    }

    @Override
    public String toString() {
        return epoch + ":" + token;
    }

    /**
     * @param text the form {@link #toString()} gives, {@code EPOCH:TOKEN}, or a bare token (epoch 0)
     * @return the fence
     * @throws IllegalArgumentException if it is not that form, naming it
     */
    public static Fence parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("a fence must be EPOCH:TOKEN or TOKEN, was empty");
        }
        int colon = text.indexOf(':');
        try {
            return colon < 0
                    ? new Fence(0, Long.parseLong(text))
                    : new Fence(Long.parseLong(text.substring(0, colon)), Long.parseLong(text.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a fence must be EPOCH:TOKEN or TOKEN (decimal numbers), was '"
                    + (text.length() > 60 ? text.substring(0, 60) + "…" : text) + "'");
        }
    }
}
