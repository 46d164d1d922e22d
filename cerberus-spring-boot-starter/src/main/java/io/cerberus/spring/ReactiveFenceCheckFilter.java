package io.cerberus.spring;

import io.cerberus.fencing.FenceKeeper;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The fence check of a WebFlux service: the same contract and answers as the servlet {@link FenceCheckFilter} (409 a
 * stale fence, 400 a malformed one, 428 none when {@link #requiringFence() required}, 503 the keeper's store
 * unreachable, as {@code application/problem+json}); the admitted fence is the exchange attribute
 * {@link FenceCheckFilter#FENCE_ATTRIBUTE}. The keeper's call runs on Reactor's bounded elastic scheduler, never on
 * the server's event loop. Register it as a bean (a {@link WebFilter}); it does not choose the paths it checks, so
 * give it only the requests of the protected resource, or leave those without a fence unrequired. Thread-safe.
 */
public class ReactiveFenceCheckFilter implements WebFilter {
    private final FenceCheck check;

    /** @param keeper where the newest fence of each resource is kept */
    public ReactiveFenceCheckFilter(FenceKeeper keeper) {
        this.check = new FenceCheck(keeper, false);
    }

    private ReactiveFenceCheckFilter(FenceCheck check) {
        this.check = check;
    }

    /** @return a filter that refuses a request without a fence (428) */
    public ReactiveFenceCheckFilter requiringFence() {
        return new ReactiveFenceCheckFilter(new FenceCheck(check.keeper(), true));
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        HttpHeaders headers = exchange.getRequest().getHeaders();
        String fence = headers.getFirst(FencedCalls.FENCE_HEADER);
        if (fence == null && !check.required()) {
            return chain.filter(exchange);
        }
        String resource = headers.getFirst(FencedCalls.RESOURCE_HEADER);
        return BlockingCall.of(() -> check.check(fence, resource)).flatMap(outcome -> {
            if (outcome instanceof FenceCheck.Refused refused) {
                return ReactiveIdempotencyKeyFilter.problem(exchange, refused.problem());
            }
            if (outcome instanceof FenceCheck.Admitted admitted) {
                exchange.getAttributes().put(FenceCheckFilter.FENCE_ATTRIBUTE, admitted.fence());
            }
            return chain.filter(exchange);
        });
    }
}
