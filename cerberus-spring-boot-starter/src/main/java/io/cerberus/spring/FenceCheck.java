package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.fencing.FenceKeeper;
import io.cerberus.fencing.StaleFenceException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decisions of the fence check, shared by the servlet {@link FenceCheckFilter} and the WebFlux
 * {@link ReactiveFenceCheckFilter}: from a request's fence headers, admit the fence through the keeper, pass a
 * request without one, or refuse it with a problem of its own. {@link #check} may block on the keeper's store.
 */
final class FenceCheck {
    private static final Logger LOG = LoggerFactory.getLogger(FenceCheckFilter.class);

    /** What the check decided. */
    sealed interface Outcome permits Pass, Admitted, Refused {}

    /** No fence, and none required: the request goes on unchecked. */
    record Pass() implements Outcome {}

    /** The fence was admitted: the request goes on, with the fence as {@link FenceCheckFilter#FENCE_ATTRIBUTE}. */
    record Admitted(Fence fence) implements Outcome {}

    /** Refused: the problem is the answer. */
    record Refused(IdempotencyKeyRules.Problem problem) implements Outcome {}

    private final FenceKeeper keeper;
    private final boolean required;

    FenceCheck(FenceKeeper keeper, boolean required) {
        this.keeper = Objects.requireNonNull(keeper, "keeper");
        this.required = required;
    }

    FenceKeeper keeper() {
        return keeper;
    }

    boolean required() {
        return required;
    }

    /**
     * @param fenceHeader the request's {@value FencedCalls#FENCE_HEADER}, or null
     * @param resourceHeader its {@value FencedCalls#RESOURCE_HEADER}, or null
     * @return 428 without a fence when one is required; 400 a malformed fence or one without its resource; 409 a
     *     stale fence (naming the newest seen); 503 the keeper's store unreachable (logged at WARN); else pass or
     *     admitted
     */
    Outcome check(String fenceHeader, String resourceHeader) {
        if (fenceHeader == null) {
            return required
                    ? new Refused(new IdempotencyKeyRules.Problem(
                            428,
                            "Fence required",
                            "this service takes a request only with its " + FencedCalls.FENCE_HEADER
                                    + " header (EPOCH:TOKEN of the caller's lock)"))
                    : new Pass();
        }
        FencedCalls.Call call;
        try {
            call = new FencedCalls.Call(Fence.parse(fenceHeader.strip()), resourceHeader);
        } catch (IllegalArgumentException e) {
            return new Refused(new IdempotencyKeyRules.Problem(
                    400,
                    "Malformed fence",
                    e.getMessage() + " (headers " + FencedCalls.FENCE_HEADER + " and " + FencedCalls.RESOURCE_HEADER
                            + ")"));
        }
        try {
            keeper.admit(call.resource(), call.fence());
        } catch (StaleFenceException e) {
            return new Refused(new IdempotencyKeyRules.Problem(409, "Stale fence", e.getMessage()));
        } catch (RuntimeException e) {
            LOG.warn("fence of resource '{}' not checked: the fence keeper failed", call.resource(), e);
            return new Refused(new IdempotencyKeyRules.Problem(
                    503, "Fence keeper unavailable", "the fence could not be checked; try again"));
        }
        return new Admitted(call.fence());
    }
}
