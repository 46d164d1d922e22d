package io.cerberus.spring;

import io.cerberus.testkit.TestTimes;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds a guarded method inside its body until the test opens it; tells when it got there. */
final class Gate {
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch opened = new CountDownLatch(1);

    /** Called by the method: says it is inside, then waits until the test opens the gate. */
    void enterAndWait() {
        entered.countDown();
        try {
            if (!opened.await(TestTimes.millis(30_000).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    boolean awaitEntered(long millis) throws InterruptedException {
        return entered.await(TestTimes.millis(millis).toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean wasEntered() {
        return entered.getCount() == 0;
    }

    void open() {
        opened.countDown();
    }
}
