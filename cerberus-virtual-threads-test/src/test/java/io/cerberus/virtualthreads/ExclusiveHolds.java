package io.cerberus.virtualthreads;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Lease;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The critical section of a round of holds on numbered names, and what it proves: no hold of a
 * name overlaps another of the same name, and (on a fenced engine) every hold's fencing token is
 * larger than the name's previous one.
 */
final class ExclusiveHolds {
    private final boolean fenced;
    private final AtomicInteger[] holders;
    private final AtomicLongArray lastToken;
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger backwards = new AtomicInteger();

    /**
     * @param names how many names the holds are of, numbered from 0
     * @param fenced whether to check the fencing tokens
     */
    ExclusiveHolds(int names, boolean fenced) {
        this.fenced = fenced;
        holders = new AtomicInteger[names];
        lastToken = new AtomicLongArray(names);
        for (int i = 0; i < names; i++) {
            holders[i] = new AtomicInteger();
        }
    }

    /** The critical section of {@code lease}, a hold of name {@code name}; call it while the lease is held. */
    void hold(int name, Lease lease) {
        if (holders[name].incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        if (fenced) {
            long token = lease.fencingToken();
            if (token <= lastToken.getAndSet(name, token)) {
                backwards.incrementAndGet();
            }
        }
        holders[name].decrementAndGet();
    }

    void assertExclusive() {
        assertThat(overlaps)
                .as("holds that overlapped another of the same name")
                .hasValue(0);
        assertThat(backwards)
                .as("fencing tokens not above the name's previous one")
                .hasValue(0);
    }
}
