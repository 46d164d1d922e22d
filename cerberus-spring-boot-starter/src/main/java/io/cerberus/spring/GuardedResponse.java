package io.cerberus.spring;

import io.cerberus.idempotency.IdempotencyAttempt;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response of a request that {@link ReactiveIdempotencyKeyFilter} runs under a claimed key:
 * the WebFlux counterpart of {@link GuardedExchange} and {@link ResponseRecorder}.
 *
 * <p>Invariants: the attempt is settled exactly once (an atomic flag), before the first byte of
 * the body goes to the client, so a retry sent the moment the client reads the response finds the
 * key stored or free, never in progress; at most {@code max-stored-response-size} bytes are held.
 * A body that fits is held whole, stored by the status rules ({@link IdempotencyKeyRules#stored}),
 * then written; a body that passes the size settles the key then ("ran, response not kept", or
 * released) and streams on; a response that ends without a body is stored with an empty one; a
 * response written with {@code writeAndFlushWith} (server-sent events) is not stored, and frees the
 * key. The store's calls run on the bounded elastic scheduler.
 */
final class GuardedResponse extends ServerHttpResponseDecorator {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final IdempotencyAttempt<StoredResponse> attempt;
    private final IdempotencyKeyRules rules;
    private final long maxStored;
    private final String request;
    private final AtomicBoolean settled = new AtomicBoolean();

    /** @param request {@code METHOD /path}, for the log */
    GuardedResponse(
            ServerHttpResponse response,
            IdempotencyAttempt<StoredResponse> attempt,
            IdempotencyKeyRules rules,
            String request) {
        super(response);
        this.attempt = attempt;
        this.rules = rules;
        this.maxStored = rules.settings().getMaxStoredResponseSize().toBytes();
        this.request = request;
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
        AtomicLong size = new AtomicLong();
        AtomicBoolean decided = new AtomicBoolean();
        // Held until the body ends or passes the size; then one list per later buffer.
        Flux<DataBuffer> out = Flux.<DataBuffer>from(body)
                .bufferUntil(buffer -> size.addAndGet(buffer.readableByteCount()) > maxStored)
                .concatMap(held -> {
                    if (!decided.compareAndSet(false, true)) {
                        return Flux.fromIterable(held);
                    }
                    byte[] kept = drain(held);
                    Mono<Void> settle = size.get() > maxStored ? passedLimit() : complete(kept);
                    return settle.thenMany(Flux.just(bufferFactory().wrap(kept)));
                })
                .concatWith(Mono.defer(() -> decided.compareAndSet(false, true) ? complete(new byte[0]) : Mono.empty())
                        .then(Mono.<DataBuffer>empty()));
        return super.writeWith(out);
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
        return release("streamed its response (server-sent events): a streamed response cannot be replayed,"
                        + " so it was not stored and its Idempotency-Key was released; leave such paths out of"
                        + " cerberus.idempotency.http.paths")
                .then(super.writeAndFlushWith(body));
    }

    @Override
    public Mono<Void> setComplete() {
        return complete(new byte[0]).then(super.setComplete());
    }

    /** The request's chain ended: store an empty body if nothing was written. */
    Mono<Void> ended() {
        return complete(new byte[0]);
    }

    /** The request failed: the key is released, or its failure remembered as the guard's options say. */
    Mono<Void> failed(Throwable failure) {
        return settle(() -> attempt.fail(failure));
    }

    /** The client went away: the key is released. */
    void cancelled() {
        if (!settled.get()) {
            release("was cancelled").subscribe();
        }
    }

    private Mono<Void> complete(byte[] body) {
        return settle(() -> {
            int status = status();
            if (IdempotencyKeyRules.stored(status)) {
                try {
                    attempt.complete(new StoredResponse(status, storedHeaders(), body));
                } catch (RuntimeException e) {
                    LOG.error(
                            "{} answered {}, but the idempotency store could not keep its response: it is sent all"
                                    + " the same; until the key's lease runs out a duplicate gets 409, then it runs again",
                            request,
                            status,
                            e);
                }
            }
            attempt.close();
        });
    }

    private Mono<Void> passedLimit() {
        return settle(() -> {
            int status = status();
            try {
                if (IdempotencyKeyRules.stored(status)) {
                    LOG.warn(
                            "{} answered {} with more than cerberus.idempotency.http.max-stored-response-size ({} bytes):"
                                    + " sent as written and not stored; a duplicate gets 422",
                            request,
                            status,
                            maxStored);
                    attempt.completeNotKept(rules.notKept());
                }
                attempt.close();
            } catch (RuntimeException e) {
                LOG.error(
                        "{} answered {} with more than {} bytes, but the idempotency store could not record that its"
                                + " response is not kept: until the key's lease runs out a duplicate gets 409, then it runs again",
                        request,
                        status,
                        maxStored,
                        e);
            }
        });
    }

    private Mono<Void> release(String why) {
        return settle(() -> {
            LOG.debug("{} {}: its response is not stored, its Idempotency-Key is released", request, why);
            attempt.close();
        });
    }

    /** @return the settlement, run once on the bounded elastic scheduler (the store's calls block) */
    private Mono<Void> settle(Runnable settlement) {
        return Mono.defer(() -> settled.compareAndSet(false, true)
                ? BlockingCall.of(() -> {
                            settlement.run();
                            return null;
                        })
                        .then()
                : Mono.empty());
    }

    private int status() {
        HttpStatusCode status = getStatusCode();
        return status == null ? 200 : status.value();
    }

    private List<Map.Entry<String, String>> storedHeaders() {
        MediaType type = getHeaders().getContentType();
        return rules.storedHeaders(name ->
                "Content-Type".equalsIgnoreCase(name) && type != null ? List.of(type.toString()) : values(name));
    }

    /** @return the values of a header; through {@code forEach}, which Spring 6 and 7 both have with one signature */
    private List<String> values(String name) {
        List<String> values = new ArrayList<>();
        getHeaders().forEach((header, each) -> {
            if (header.equalsIgnoreCase(name)) {
                values.addAll(each);
            }
        });
        return values;
    }

    /** @return the bytes of the buffers, which are released */
    private static byte[] drain(List<DataBuffer> buffers) {
        int length = buffers.stream().mapToInt(DataBuffer::readableByteCount).sum();
        byte[] bytes = new byte[length];
        int at = 0;
        for (DataBuffer buffer : buffers) {
            int n = buffer.readableByteCount();
            buffer.read(bytes, at, n);
            at += n;
            DataBufferUtils.release(buffer);
        }
        return bytes;
    }
}
