package io.cerberus.check.run;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Leadership;
import io.cerberus.LeadershipListener;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.Permit;
import io.cerberus.Permits;
import io.cerberus.check.recipe.Recipe;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lock a loop holds, whichever way it took it: Cerberus's lease (with its fencing token when the engine has
 * them, and its loss notices), a permit of a semaphore (its slot, the slot's fencing token), a term of leadership
 * (its token the term; {@link #standing} tells a long-lived leader whether it may act), a recipe's hold (no token, no
 * notice), or nothing ({@code --no-lock}).
 *
 * @param slot the permit's slot, 0 for a lock
 */
record Held(
        long token,
        Lease lease,
        Recipe.Hold recipeHold,
        Leadership leadership,
        AtomicBoolean revoked,
        Permits permits,
        int slot) {
    /** How long a loop tries for a lock (or to be elected) before it logs {@link CheckWorkerCommand#BUSY} and picks again. */
    static final Duration TRY = Duration.ofMillis(500);

    static final Held NOTHING = new Held(-1, null, null, null, null, null, 0);

    Held(long token, Lease lease, Recipe.Hold recipeHold) {
        this(token, lease, recipeHold, null, null, null, 0);
    }

    /** @return a term of leadership (its token the term), or empty when another leads */
    static Optional<Held> elect(Cerberus cerberus, String name, String participant, boolean fencing)
            throws Unanswered, InterruptedException {
        AtomicBoolean revoked = new AtomicBoolean();
        Leadership leadership = cerberus.leadership(name, participant);
        leadership.onChange(new LeadershipListener() {
            @Override
            public void revoked(Leadership lost, String reason) {
                revoked.set(true);
            }
        });
        try {
            leadership.start();
            if (leadership.awaitLeadership(TRY)) {
                return Optional.of(
                        new Held(fencing ? leadership.term() : -1, null, null, leadership, revoked, null, 0));
            }
            leadership.close();
            return Optional.empty();
        } catch (EngineUnavailableException e) {
            leadership.close();
            throw new Unanswered(e);
        } catch (IllegalStateException e) {
            leadership.close(); // elected and lost at once: not a term this loop acts in
            return Optional.empty();
        }
    }

    /** Where a leader stands, asked before each act of a long term. */
    enum Standing {
        /** It leads, vouched for, in the term it was elected with. */
        LEADS,
        /** It cannot vouch for its term now, which may still be good: it must not act. */
        IN_DOUBT,
        /** Its term is over: lost, or elected again under a newer term. */
        REVOKED
    }

    /**
     * @return where this term stands now; isLeader() first, then the term, so a term lost and won again between
     *     the two calls is never taken for this one
     */
    Standing standing() {
        boolean leads = leadership.isLeader();
        if (revoked.get() || !sameTerm()) {
            return Standing.REVOKED;
        }
        return leads ? Standing.LEADS : Standing.IN_DOUBT;
    }

    /** @return whether the participant still holds this term's hold; without terms (no fencing) only the revoked notice tells */
    private boolean sameTerm() {
        if (token < 0) {
            return true;
        }
        try {
            return leadership.term() == token;
        } catch (IllegalStateException e) {
            return false; // leads no more: the hold was lost
        }
    }

    /**
     * @param fences whether the token is the lease's {@link io.cerberus.Fence} in its long form (with the epoch of its
     *     engine: a client switching engines) rather than its fencing token
     * @return the lease, or empty when another holds the lock
     * @throws Unanswered if the engine did not answer, or the hold was lost before its fence was read (released)
     */
    static Optional<Held> take(Cerberus cerberus, String lockName, boolean fencing, boolean fences)
            throws Unanswered, InterruptedException {
        Optional<Lease> taken;
        try {
            taken = cerberus.lock(lockName).tryAcquire(TRY);
        } catch (EngineUnavailableException e) {
            throw new Unanswered(e);
        }
        if (taken.isEmpty()) {
            return Optional.empty();
        }
        Lease lease = taken.get();
        try {
            long token = !fencing ? -1 : fences ? lease.fence().asLong() : lease.fencingToken();
            return Optional.of(new Held(token, lease, null));
        } catch (EngineUnavailableException | LockLostException e) {
            try {
                lease.close();
            } catch (RuntimeException alreadyGone) {
                // lost, or the engine is down: its lease ends by itself
            }
            throw new Unanswered(e);
        }
    }

    /**
     * @param semaphore the semaphore's name
     * @param permits its permits
     * @return one permit of it (its token the slot's fencing token), or empty when every permit is held
     * @throws Unanswered if the engine did not answer, or the permit was lost before its token was read (released)
     */
    static Optional<Held> takePermit(Cerberus cerberus, String semaphore, int permits, boolean fencing)
            throws Unanswered, InterruptedException {
        Optional<Permits> taken;
        try {
            taken = cerberus.semaphore(semaphore, permits).tryAcquire(1, TRY);
        } catch (EngineUnavailableException e) {
            throw new Unanswered(e);
        }
        if (taken.isEmpty()) {
            return Optional.empty();
        }
        Permit permit = taken.get().permits().get(0);
        try {
            long token = fencing ? permit.fencingToken() : -1;
            return Optional.of(new Held(token, null, null, null, null, taken.get(), permit.slot()));
        } catch (EngineUnavailableException | LockLostException e) {
            try {
                taken.get().close();
            } catch (RuntimeException alreadyGone) {
                // lost, or the engine is down: its lease ends by itself
            }
            throw new Unanswered(e);
        }
    }

    /** @return the permit's fence name ({@code NAME#SLOT}): the key of the register it writes */
    String fenceName() {
        return permits.permits().get(0).fenceName();
    }

    /** @return the recipe's hold, or empty when another holds the lock */
    static Optional<Held> take(Recipe recipe, String lockName) throws Unanswered, InterruptedException {
        try {
            return recipe.tryAcquire(lockName, TRY).map(hold -> new Held(-1, null, hold));
        } catch (RuntimeException e) { // the recipes' clients throw their own exceptions
            throw new Unanswered(e);
        }
    }

    void onLost(Runnable logLoss) {
        if (lease != null) {
            lease.onLost((lost, reason) -> logLoss.run());
        }
        if (permits != null) {
            permits.onLost(lost -> logLoss.run());
        }
        if (leadership != null) {
            leadership.onChange(new LeadershipListener() {
                @Override
                public void revoked(Leadership lost, String reason) {
                    if (reason.startsWith("lost")) {
                        logLoss.run();
                    }
                }
            });
        }
    }

    /** @return empty when the release was confirmed, else what the LOST line says ({@code at release}, {@code release unconfirmed}) */
    Optional<String> release() {
        if (leadership != null) {
            boolean lostFirst = revoked.get() || !leadership.isLeader();
            leadership.close();
            return lostFirst ? Optional.of("at release") : Optional.empty();
        }
        try {
            if (lease != null) {
                lease.close();
            } else if (permits != null) {
                permits.close();
            } else {
                recipeHold.release();
            }
            return Optional.empty();
        } catch (LockLostException e) {
            return Optional.of("at release");
        } catch (EngineUnavailableException e) {
            return Optional.of("release unconfirmed");
        } catch (RuntimeException e) {
            if (lease != null || permits != null) {
                throw e; // not the engine's failure: a bug, shown
            }
            return Optional.of("release unconfirmed");
        }
    }

    /** The engine did not answer a try for a lock (unreachable, timed out): the loop tries again. */
    static final class Unanswered extends Exception {
        private static final long serialVersionUID = 1L;

        Unanswered(Throwable cause) {
            super(cause);
        }
    }
}
