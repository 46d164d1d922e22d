package io.cerberus.spring;

import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A blocking call of the reactive filters (the idempotency store's, the fence keeper's) as a Mono:
 * run on Reactor's bounded elastic scheduler, its value or failure signalled from there, so what
 * follows (the application, the response) runs on that thread as with {@code subscribeOn}.
 *
 * <p>Invariant: nothing ever interrupts that thread. {@code Mono.fromCallable(..).subscribeOn(..)}
 * does not keep it: a call that fails at once cancels its own scheduled task, and if the thread
 * that scheduled the task records the task's future only after that, it cancels the future with an
 * interrupt, while the worker still runs what follows; on Tomcat the response's write then fails
 * ("the current thread was interrupted") and the connection closes without an answer. Here the
 * task is not tied to the subscription: a cancelled Mono lets the call run to its end (the store's
 * and the keeper's own timeouts bound it) and drops its signal; a value dropped so goes to the
 * subscriber's discard hook ({@code doOnDiscard}), where a caller gives back what the call took.
 */
final class BlockingCall {

    private BlockingCall() {}

    /** @return a Mono of the call's value (empty if it returns null) or of its failure */
    static <T> Mono<T> of(Callable<T> call) {
        return Mono.create(sink -> {
            try {
                Schedulers.boundedElastic().schedule(() -> {
                    T value;
                    try {
                        value = call.call();
                    } catch (Exception | Error failure) {
                        sink.error(failure);
                        return;
                    }
                    sink.success(value);
                });
            } catch (RejectedExecutionException full) {
                sink.error(full);
            }
        });
    }
}
