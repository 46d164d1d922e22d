package io.cerberus.spring;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/** The small application of the annotation tests: two services with annotated methods. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({AnnotatedServices.Orders.class, AnnotatedServices.Payments.class})
class AnnotatedServices {

    /** Methods under {@link WithDistributedLock}. */
    static class Orders {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger mostInside = new AtomicInteger();

        /** @return the most calls of {@link #hold} inside at once (a method, as callers hold a proxy) */
        public AtomicInteger mostInside() {
            return mostInside;
        }

        @WithDistributedLock(key = "'order:' + #orderId", waitTime = "10s")
        public void hold(long orderId, Gate gate) {
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                gate.enterAndWait();
            } finally {
                inside.decrementAndGet();
            }
        }

        @WithDistributedLock(key = "'order:' + #orderId", waitTime = "100ms")
        public String tryBriefly(long orderId) {
            return "ran";
        }

        @WithDistributedLock(key = "'order:' + #orderId")
        public String tryOnce(long orderId) {
            return "ran";
        }

        @WithDistributedLock(key = "'job:' + #name")
        public void fail(String name) {
            throw new IllegalStateException("job " + name + " failed");
        }

        @WithDistributedLock(key = "#order.id")
        public void badKey(long orderId) {}
    }

    record ChargeRequest(String id, long amountCents) {}

    record Receipt(String requestId, long amountCents, int run) {}

    /** Methods under {@link Idempotent}. */
    static class Payments {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicBoolean declineNext = new AtomicBoolean();

        /** @return how many times a method body ran (a method, as callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        /** @return set to make the next {@link #charge} fail */
        public AtomicBoolean declineNext() {
            return declineNext;
        }

        @Idempotent(key = "#request.id", retention = "1h")
        public Receipt charge(ChargeRequest request) {
            if (declineNext.getAndSet(false)) {
                runs.incrementAndGet();
                throw new IllegalStateException("card declined");
            }
            return new Receipt(request.id(), request.amountCents(), runs.incrementAndGet());
        }

        @Idempotent(key = "#ids")
        public List<Receipt> chargeAll(List<String> ids) {
            int run = runs.incrementAndGet();
            return ids.stream().map(id -> new Receipt(id, 100, run)).toList();
        }

        @Idempotent(key = "#id")
        public void notifyShipped(String id) {
            runs.incrementAndGet();
        }

        @Idempotent(key = "#id", onInProgress = Idempotent.InProgress.REJECT)
        public String slowRejecting(String id, Gate gate) {
            int run = runs.incrementAndGet();
            gate.enterAndWait();
            return "run " + run;
        }

        @Idempotent(key = "#id", onInProgress = Idempotent.InProgress.WAIT, waitTime = "20s")
        public String slowWaiting(String id, Gate gate) {
            int run = runs.incrementAndGet();
            gate.enterAndWait();
            return "run " + run;
        }
    }
}
