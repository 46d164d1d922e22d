package io.cerberus.spring;

import io.cerberus.Fence;
import io.cerberus.Lease;
import java.util.Optional;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * {@link FencingRequestInterceptor} for {@code WebClient}: puts a fence on each request as the headers
 * {@value FencedCalls#FENCE_HEADER} and {@value FencedCalls#RESOURCE_HEADER}. Reactive code runs on
 * threads it does not choose, so the fence comes from the Reactor context of the call
 * ({@code .contextWrite(FencingExchangeFilter.under(lease))}); without one, from the subscribing
 * thread's {@link FencedCalls#under scope}; else the request goes as it is. Install it with
 * {@code WebClient.builder().filter(new FencingExchangeFilter())}. Stateless.
 */
public class FencingExchangeFilter implements ExchangeFilterFunction {

    /**
     * @param lease a held lease on an engine with fencing tokens
     * @return a Reactor context carrying its fence, for the resource named as its lock
     */
    public static ContextView under(Lease lease) {
        return under(FencedCalls.Call.of(lease));
    }

    /**
     * @param fence the fence
     * @param resource what it is for, as the service keeps it
     * @return a Reactor context carrying the fence
     */
    public static ContextView under(Fence fence, String resource) {
        return under(new FencedCalls.Call(fence, resource));
    }

    private static ContextView under(FencedCalls.Call call) {
        return Context.of(FencedCalls.Call.class, call);
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        Optional<FencedCalls.Call> onThread = FencedCalls.current();
        return Mono.deferContextual(context -> {
            Optional<FencedCalls.Call> call =
                    context.<FencedCalls.Call>getOrEmpty(FencedCalls.Call.class).or(() -> onThread);
            return next.exchange(call.map(fenced -> ClientRequest.from(request)
                            .headers(headers -> FencingRequestInterceptor.writeTo(fenced, headers))
                            .build())
                    .orElse(request));
        });
    }
}
