package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.fencing.FenceKeeper;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The protected service's side of a fence that travels ({@link FencedCalls}): a request carrying
 * {@value FencedCalls#FENCE_HEADER} is admitted by a {@link FenceKeeper} for the resource its
 * {@value FencedCalls#RESOURCE_HEADER} names before the application sees it, and refused when the
 * resource has seen a newer fence — a request sent by a holder whose lock has since passed on. The
 * admitted fence is the request attribute {@link #FENCE_ATTRIBUTE}, for the service to fence its own
 * store with.
 *
 * <p>Answers of its own, as {@code application/problem+json}: 409 a stale fence (the detail names the
 * newest seen); 400 a malformed fence or a fence without its resource; 428 no fence when
 * {@link #requiringFence()}; 503 the keeper's store unreachable. Without a fence (and not required),
 * the request passes unchecked. It orders admissions, not the work a request does once admitted.
 */
public class FenceCheckFilter extends OncePerRequestFilter {
    /** The request attribute holding the admitted {@link Fence}. */
    public static final String FENCE_ATTRIBUTE = FenceCheckFilter.class.getName() + ".fence";

    private final FenceCheck check;

    /** @param keeper where the newest fence of each resource is kept */
    public FenceCheckFilter(FenceKeeper keeper) {
        this.check = new FenceCheck(keeper, false);
    }

    private FenceCheckFilter(FenceCheck check) {
        this.check = check;
    }

    /** @return a filter that refuses a request without a fence (428) */
    public FenceCheckFilter requiringFence() {
        return new FenceCheckFilter(new FenceCheck(check.keeper(), true));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        FenceCheck.Outcome outcome = check.check(
                request.getHeader(FencedCalls.FENCE_HEADER), request.getHeader(FencedCalls.RESOURCE_HEADER));
        if (outcome instanceof FenceCheck.Refused refused) {
            IdempotencyKeyFilter.problem(response, refused.problem());
            return;
        }
        if (outcome instanceof FenceCheck.Admitted admitted) {
            request.setAttribute(FENCE_ATTRIBUTE, admitted.fence());
        }
        chain.doFilter(request, response);
    }
}
