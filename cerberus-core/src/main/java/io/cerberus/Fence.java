package io.cerberus;

/**
 * A fencing token with the epoch it was issued in, as a protected resource compares them: by epoch,
 * then by token. Within one epoch the tokens are those of one engine ({@link Lease#fencingToken()});
 * a resource that keeps the largest fence it has seen and refuses a write with a smaller one refuses
 * every holder whose hold has since passed to another.
 *
 * <p>The epoch is 0 for a client with one engine. (Ordering the fences of different engines across
 * a switch, by a larger epoch, is not given yet: until then, a resource must treat a switch as a
 * new series, as docs/FAILOVER.md says.)
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
     * @return its fence
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens
     */
    public static Fence of(Lease lease) {
        return new Fence(0, lease.fencingToken());
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
