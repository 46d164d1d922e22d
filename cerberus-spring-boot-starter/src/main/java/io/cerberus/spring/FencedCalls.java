package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.fencing.FenceKeeper;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The fence that travels with this thread's outgoing HTTP calls to a protected service: a lease's
 * {@link Fence} and the resource it is for, bound to the thread for a block ({@link #under}), sent by
 * {@link FencingRequestInterceptor} as {@value #FENCE_HEADER} ({@code EPOCH:TOKEN}) and
 * {@value #RESOURCE_HEADER}, and checked by the service's {@link FenceCheckFilter}. Scopes nest; the
 * innermost wins, and closing it restores the one around it. A method under {@code @WithDistributedLock}
 * (blocking) or {@code @ExclusiveRun} runs in the scope of its lease.
 *
 * <pre>{@code
 * try (Lease lease = cerberus.lock("account:42").acquire(Duration.ofSeconds(5));
 *         FencedCalls.Scope fenced = FencedCalls.under(lease)) {
 *     ledger.post().uri("/entries").body(entry).retrieve().toBodilessEntity();  // carries the fence
 * }
 * }</pre>
 */
public final class FencedCalls {
    /** The request header of the fence, {@code EPOCH:TOKEN}. */
    public static final String FENCE_HEADER = "Cerberus-Fence";
    /** The request header of the resource the fence is for (by default the lock's name). */
    public static final String RESOURCE_HEADER = "Cerberus-Fence-Resource";

    /** What this thread's calls carry: a lease's fence is read at the first call that sends it, not when bound. */
    private static final ThreadLocal<Supplier<Call>> CURRENT = new ThreadLocal<>();

    private FencedCalls() {}

    /**
     * A fence bound to calls.
     *
     * @param fence the fence
     * @param resource what it is for
     */
    public record Call(Fence fence, String resource) {
        /** Checks the parts. */
        public Call {
            Objects.requireNonNull(fence, "fence");
            FenceKeeper.checkedResource(resource);
        }

        /**
         * @param lease a held lease on an engine with fencing tokens
         * @return its fence, for the resource named as its lock
         */
        public static Call of(Lease lease) {
            return new Call(Fence.of(lease), lease.lockName());
        }
    }

    /** The end of a block of fenced calls. */
    public interface Scope extends AutoCloseable {
        /** Restores the fence bound before this scope, if any. */
        @Override
        void close();
    }

    /**
     * @param lease a held lease on an engine with fencing tokens
     * @return a scope in which this thread's calls carry its fence, for the resource named as its lock
     */
    public static Scope under(Lease lease) {
        lease.fencingToken(); // refuses an engine without fencing tokens now, not at the first call
        return bind(() -> Call.of(lease)); // the lease reads its epoch once, at the first call
    }

    /**
     * @param fence the fence
     * @param resource what it is for, as the service keeps it
     * @return a scope in which this thread's calls carry the fence
     */
    public static Scope under(Fence fence, String resource) {
        Call call = new Call(fence, resource);
        return bind(() -> call);
    }

    private static Scope bind(Supplier<Call> call) {
        Supplier<Call> outer = CURRENT.get();
        CURRENT.set(call);
        return () -> {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        };
    }

    /**
     * Binds a lease's fence when its engine gives fencing tokens, for the annotations' methods.
     *
     * @param lease a held lease
     * @return its scope, or one that binds nothing on an engine without fencing tokens
     */
    static Scope underIfFenced(Lease lease) {
        try {
            return under(lease);
        } catch (UnsupportedCapabilityException noTokens) {
            return () -> {};
        }
    }

    /**
     * @return the fence this thread's calls carry now, if any
     * @throws io.cerberus.LockLostException if the bound lease was no longer held when its fence was first read
     */
    public static Optional<Call> current() {
        return Optional.ofNullable(CURRENT.get()).map(Supplier::get);
    }
}
