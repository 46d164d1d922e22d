package io.cerberus.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The critical section of the async, virtual-thread and semaphore workloads, and what it checks: a
 * hold that finds as many holds of its name inside as the name allows (one for a lock, the permits
 * of a semaphore) is an overlap; a fencing token not above the name's previous grant goes
 * backwards. Either is a failure of the peer, never a figure.
 */
final class Exclusion {
    private final int holders;
    private final AtomicInteger[] inside;
    private final AtomicLongArray lastToken;
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger backwards = new AtomicInteger();

    /** @param names the names the holds are of, numbered from 0; one hold of a name at a time */
    Exclusion(int names) {
        this(names, 1);
    }

    /**
     * @param names the names the holds are of, numbered from 0
     * @param holders how many holds of a name may be inside at once
     */
    Exclusion(int names, int holders) {
        this.holders = holders;
        inside = new AtomicInteger[names];
        lastToken = new AtomicLongArray(names);
        for (int i = 0; i < names; i++) {
            inside[i] = new AtomicInteger();
            lastToken.set(i, Long.MIN_VALUE);
        }
    }

    /**
     * The critical section of one hold of name {@code name}, granted with this token.
     *
     * @param token the grant's fencing token, or {@link Peer.AsyncHeld#NO_TOKEN} for a peer whose grants carry none
     */
    void hold(int name, long token) {
        if (inside[name].incrementAndGet() > holders) {
            overlaps.incrementAndGet();
        }
        if (token != Peer.AsyncHeld.NO_TOKEN && token <= lastToken.getAndSet(name, token)) {
            backwards.incrementAndGet();
        }
        inside[name].decrementAndGet();
    }

    /**
     * @param peer the peer, for the message
     * @throws IllegalStateException if a hold overlapped another of its name or a token went backwards
     */
    void check(String peer) {
        if (overlaps.get() > 0 || backwards.get() > 0) {
            throw new IllegalStateException(peer + " broke mutual exclusion: " + overlaps.get()
                    + " hold(s) found " + holders + " other(s) of the same name inside, " + backwards.get()
                    + " fencing token(s) not above the name's previous one");
        }
    }
}
