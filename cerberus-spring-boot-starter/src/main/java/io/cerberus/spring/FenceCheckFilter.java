package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.fencing.FenceKeeper;
import io.cerberus.fencing.StaleFenceException;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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

    private static final Logger LOG = LoggerFactory.getLogger(FenceCheckFilter.class);

    private final FenceKeeper keeper;
    private final boolean required;

    /** @param keeper where the newest fence of each resource is kept */
    public FenceCheckFilter(FenceKeeper keeper) {
        this(keeper, false);
    }

    private FenceCheckFilter(FenceKeeper keeper, boolean required) {
        this.keeper = Objects.requireNonNull(keeper, "keeper");
        this.required = required;
    }

    /** @return a filter that refuses a request without a fence (428) */
    public FenceCheckFilter requiringFence() {
        return new FenceCheckFilter(keeper, true);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String header = request.getHeader(FencedCalls.FENCE_HEADER);
        if (header == null) {
            if (required) {
                problem(
                        response,
                        428,
                        "Fence required",
                        "this service takes a request only with its " + FencedCalls.FENCE_HEADER
                                + " header (EPOCH:TOKEN of the caller's lock)");
                return;
            }
            chain.doFilter(request, response);
            return;
        }
        FencedCalls.Call call;
        try {
            call = new FencedCalls.Call(Fence.parse(header.strip()), request.getHeader(FencedCalls.RESOURCE_HEADER));
        } catch (IllegalArgumentException e) {
            problem(
                    response,
                    400,
                    "Malformed fence",
                    e.getMessage() + " (headers " + FencedCalls.FENCE_HEADER + " and " + FencedCalls.RESOURCE_HEADER
                            + ")");
            return;
        }
        try {
            keeper.admit(call.resource(), call.fence());
        } catch (StaleFenceException e) {
            problem(response, 409, "Stale fence", e.getMessage());
            return;
        } catch (RuntimeException e) {
            LOG.warn("fence of resource '{}' not checked: the fence keeper failed", call.resource(), e);
            problem(response, 503, "Fence keeper unavailable", "the fence could not be checked; try again");
            return;
        }
        request.setAttribute(FENCE_ATTRIBUTE, call.fence());
        chain.doFilter(request, response);
    }

    private static void problem(HttpServletResponse response, int status, String title, String detail)
            throws IOException {
        IdempotencyKeyFilter.problem(response, new IdempotencyKeyRules.Problem(status, title, detail));
    }
}
