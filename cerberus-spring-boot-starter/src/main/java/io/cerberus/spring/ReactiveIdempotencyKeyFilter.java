package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@code Idempotency-Key} filter of WebFlux applications: the same contract, settings and
 * answers as the servlet {@link IdempotencyKeyFilter} (its decisions are
 * {@link IdempotencyKeyRules}): the first request with a key runs and its response (status,
 * selected headers, body) is stored; a duplicate gets it replayed with the replay header; 400, 401,
 * 409, 413, 422 and 503 of its own, as {@code application/problem+json}; a response of status 500
 * or more, or 408, 409, 425, 429, is not stored and frees the key.
 *
 * <p>The store's calls (claim, complete, release), and a duplicate's wait for the first request
 * when the guard WAITs, run on Reactor's bounded elastic scheduler, never on the server's event
 * loop. The response is settled before its first byte goes to the client ({@link GuardedResponse});
 * a request that fails or is cancelled (the client went away) frees its key. A response written
 * with {@code writeAndFlushWith} (server-sent events) is streamed, not stored, and frees its key.
 * Thread-safe.
 */
public class ReactiveIdempotencyKeyFilter implements WebFilter, Ordered {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final Supplier<Cerberus> cerberus;
    private final Supplier<IdempotencyOptions> options;
    private final IdempotencyKeyRules rules;
    private final CerberusProperties.Http settings;

    /**
     * @param cerberus the client whose first engine keeps the records (they stay there across switches)
     * @param options the guard's options
     * @param settings the {@code cerberus.idempotency.http.*} settings
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     */
    public ReactiveIdempotencyKeyFilter(
            Supplier<Cerberus> cerberus, Supplier<IdempotencyOptions> options, CerberusProperties.Http settings) {
        this.cerberus = cerberus;
        this.options = options;
        this.rules = new IdempotencyKeyRules(settings);
        this.settings = settings;
    }

    /** @return after security filters (ordered at -100), so an unauthenticated request claims no key */
    @Override
    public int getOrder() {
        return CerberusWebAutoConfiguration.FILTER_ORDER;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!rules.guards(request.getMethod().name(), request.getPath().pathWithinApplication())) {
            return chain.filter(exchange);
        }
        String clientKey = request.getHeaders().getFirst(settings.getHeaderName());
        if (clientKey == null) {
            return settings.isRequired() ? problem(exchange, rules.missingKey()) : chain.filter(exchange);
        }
        return exchange.getPrincipal()
                .map(Principal::getName)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .flatMap(user -> {
                    if (settings.isRequireUser() && user.isEmpty()) {
                        return problem(exchange, rules.userRequired());
                    }
                    return readBody(request)
                            .flatMap(body -> body.isEmpty()
                                    ? problem(exchange, rules.bodyTooLarge())
                                    : guarded(exchange, chain, clientKey, user.orElse(null), body.get()));
                });
    }

    private Mono<Void> guarded(
            ServerWebExchange exchange, WebFilterChain chain, String clientKey, String user, byte[] body) {
        ServerHttpRequest request = exchange.getRequest();
        String operation =
                rules.operation(request.getMethod().name(), request.getPath().value(), user);
        IdempotencyKey key;
        try {
            key = IdempotencyKeyRules.key(
                    operation, clientKey, body, request.getURI().getRawQuery());
        } catch (IllegalArgumentException e) {
            return problem(exchange, IdempotencyKeyRules.malformed(e));
        }
        // what claiming answers: the attempt, or an answer of the filter's own (only the claim's failures are mapped)
        Mono<Object> claim = BlockingCall.of(() -> (Object) cerberus.get()
                        .idempotency(options.get())
                        .begin(key, settings.getRetention(), StoredResponse.CODEC))
                // a claim made for an exchange cancelled meanwhile (the client went away) gives the key back
                .doOnDiscard(IdempotencyAttempt.class, attempt -> giveBack(attempt, operation))
                .onErrorResume(RuntimeException.class, e -> refused(e, operation))
                .onErrorResume(InterruptedException.class, e -> Mono.just(IdempotencyKeyRules.interrupted()));
        return claim.flatMap(claimed -> {
            if (claimed instanceof IdempotencyKeyRules.Problem refused) {
                return problem(exchange, refused);
            }
            @SuppressWarnings("unchecked")
            IdempotencyAttempt<StoredResponse> attempt = (IdempotencyAttempt<StoredResponse>) claimed;
            return attempt.mustRun()
                    ? run(exchange, chain, attempt, body, operation)
                    : replay(exchange, attempt.replayed());
        });
    }

    /** Gives back the key of a claim nobody will run; the store frees it at its lease's end if this fails. */
    private static void giveBack(IdempotencyAttempt<?> attempt, String operation) {
        try {
            attempt.close();
        } catch (RuntimeException e) {
            LOG.warn(
                    "could not give back the Idempotency-Key of {}, whose request went away: {}",
                    operation,
                    e.getMessage());
        }
    }

    /** @return the answer to a claim that did not let the request run, or the failure as it is */
    private Mono<Object> refused(RuntimeException failure, String operation) {
        IdempotencyKeyRules.Problem refused = rules.refused(failure);
        if (refused == null) {
            return Mono.error(failure);
        }
        if (failure instanceof IdempotencyStoreUnavailableException) {
            LOG.warn("idempotency store unavailable for {}: {}", operation, failure.getMessage());
        }
        return Mono.just(refused);
    }

    private Mono<Void> run(
            ServerWebExchange exchange,
            WebFilterChain chain,
            IdempotencyAttempt<StoredResponse> attempt,
            byte[] body,
            String operation) {
        GuardedResponse response = new GuardedResponse(exchange.getResponse(), attempt, rules, operation);
        ServerWebExchange guarded = exchange.mutate()
                .request(new CachedBodyRequest(exchange.getRequest(), body))
                .response(response)
                .build();
        return chain.filter(guarded)
                .then(Mono.defer(response::ended))
                .onErrorResume(failure -> response.failed(failure).then(Mono.error(failure)))
                .doOnCancel(response::cancelled);
    }

    private Mono<Void> replay(ServerWebExchange exchange, StoredResponse stored) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
        for (Map.Entry<String, String> header : stored.headers()) {
            response.getHeaders().add(header.getKey(), header.getValue());
        }
        response.getHeaders().set(settings.getReplayHeader(), "true");
        response.getHeaders().setContentLength(stored.body().length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(stored.body())));
    }

    /** @return the whole body, or empty if it is larger than the limit */
    private Mono<Optional<byte[]>> readBody(ServerHttpRequest request) {
        long limit = settings.getMaxBodySize().toBytes();
        if (request.getHeaders().getContentLength() > limit) {
            return Mono.just(Optional.empty());
        }
        return DataBufferUtils.join(request.getBody(), (int) limit)
                .map(buffer -> {
                    byte[] bytes = new byte[buffer.readableByteCount()];
                    buffer.read(bytes);
                    DataBufferUtils.release(buffer);
                    return Optional.of(bytes);
                })
                .defaultIfEmpty(Optional.of(new byte[0]))
                .onErrorResume(DataBufferLimitException.class, e -> Mono.just(Optional.empty()));
    }

    /** Answers the problem as {@code application/problem+json}; also the reactive fence check's answers. */
    static Mono<Void> problem(ServerWebExchange exchange, IdempotencyKeyRules.Problem problem) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = problem.json().getBytes(StandardCharsets.UTF_8);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** The request with its body already read: the application reads it again from memory. */
    private static final class CachedBodyRequest extends ServerHttpRequestDecorator {
        private final byte[] body;

        CachedBodyRequest(ServerHttpRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public Flux<DataBuffer> getBody() {
            return body.length == 0
                    ? Flux.empty()
                    : Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
        }
    }
}
