package io.cerberus.spring;

import io.cerberus.Lease;
import io.cerberus.idempotency.Outcome;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.aspectj.lang.ProceedingJoinPoint;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The aspects' Mono and Flux calls, in Reactor's terms. Loaded only when a method returns Mono or
 * Flux, so only when Reactor is on the class path; no signature of it names a Reactor type, so the
 * aspects that call it load no Reactor class.
 *
 * <p>Nothing starts at the method's call: each subscription asks again. A lock is held from the
 * grant to the publisher's end (complete, error or cancel), then released without blocking; a
 * subscription cancelled while it waits withdraws the attempt (the lease's future is cancelled, and
 * a grant that races the cancel is released by the client).
 */
final class ReactiveCalls {

    private ReactiveCalls() {}

    /**
     * @param flux whether the method returns Flux (else Mono)
     * @param acquire asks for the lock, at each subscription; its future is cancelled with the subscription
     * @param busy what a failed acquire becomes (the blocking path's exception)
     * @param call the method's call, proceeded under the lock
     * @return the method's publisher, under the lock while it runs
     */
    static Object locked(
            boolean flux,
            Supplier<CompletableFuture<Lease>> acquire,
            Function<Throwable, Throwable> busy,
            ProceedingJoinPoint call) {
        Mono<Lease> lease = Mono.fromFuture(acquire, false).onErrorMap(busy);
        Function<Lease, Publisher<?>> release = held -> Mono.fromFuture(held::releaseAsync);
        if (flux) {
            return Flux.usingWhen(
                    lease, held -> publisher(call), release, (held, error) -> release.apply(held), release);
        }
        return Mono.usingWhen(
                lease, held -> Mono.from(publisher(call)), release, (held, error) -> release.apply(held), release);
    }

    /**
     * @param execute runs the guard, at each subscription; its future is cancelled with the subscription
     * @return a Mono of the first attempt's element (stored and replayed), empty when it was empty
     */
    static Object once(Supplier<CompletableFuture<Outcome<Object>>> execute) {
        return Mono.fromFuture(execute, false).flatMap(outcome -> Mono.justOrEmpty(outcome.value()));
    }

    /** @return the future of the Mono the method returned (subscribed now), for the guard to settle with */
    static CompletableFuture<Object> started(Object mono) {
        return mono == null
                ? CompletableFuture.completedFuture(null)
                : Mono.from(cast(mono)).toFuture();
    }

    private static Publisher<Object> publisher(ProceedingJoinPoint call) {
        try {
            Object returned = call.proceed();
            return returned == null ? Mono.empty() : cast(returned);
        } catch (Throwable failure) {
            return Mono.error(failure);
        }
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> cast(Object publisher) {
        return (Publisher<Object>) publisher;
    }
}
