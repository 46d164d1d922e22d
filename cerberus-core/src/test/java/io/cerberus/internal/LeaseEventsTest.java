package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Lease events run in turn on one daemon thread of the client's, which a failing call does not stop and which ends with it. */
class LeaseEventsTest {

    @Test
    void eventsRunInTurnOnADaemonThreadThatOutlivesAFailingCallAndEndsAtClose() throws Exception {
        LeaseEvents events = new LeaseEvents("unit");
        CompletableFuture<Thread> first = new CompletableFuture<>();
        events.run("a call", () -> first.complete(Thread.currentThread()));
        Thread thread = first.get(5, TimeUnit.SECONDS);
        assertThat(thread.getName()).isEqualTo("cerberus-lease-events-unit");
        assertThat(thread.isDaemon()).as("never keeps the JVM alive").isTrue();

        events.run("a failing call", () -> {
            throw new IllegalStateException("a listener's bug");
        });
        CompletableFuture<Thread> next = new CompletableFuture<>();
        events.run("the next call", () -> next.complete(Thread.currentThread()));
        assertThat(next.get(5, TimeUnit.SECONDS)).isSameAs(thread);

        events.close();
        thread.join(TimeUnit.SECONDS.toMillis(5));
        assertThat(thread.isAlive()).as("the event thread ends at close").isFalse();
        AtomicBoolean ran = new AtomicBoolean();
        events.run("a call after close", () -> ran.set(true));
        assertThat(ran).as("dropped").isFalse();
    }
}
