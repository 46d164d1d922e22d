package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedSemaphore;
import io.cerberus.MultiLease;
import io.cerberus.Permit;
import io.cerberus.Permits;
import io.cerberus.fencing.FencedFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The examples of docs/SEMAPHORES.md, compiled here and run on {@code mem:}. */
class SemaphoreExamplesTest {
    private static final String PAGE = "docs/SEMAPHORES.md";
    private static final String SOURCE =
            "cerberus-testkit/src/test/java/io/cerberus/testkit/SemaphoreExamplesTest.java";

    private final Cerberus cerberus = Cerberus.connect("mem:semaphore-examples");
    private final Partner partner = new Partner();
    private final Object request = "a request";
    private final Ledger ledger = new Ledger();

    @TempDir
    Path progressDir;

    @AfterEach
    void close() {
        cerberus.close();
    }

    @Test
    void everyJavaBlockOfThePageIsHere() {
        assertThat(DocExamples.assertEveryJavaBlockIn(PAGE, "## Semaphores", SOURCE))
                .isEqualTo(4);
        assertThat(DocExamples.assertEveryJavaBlockIn(PAGE, "## Multi-locks", SOURCE))
                .isEqualTo(1);
    }

    @Test
    @SuppressWarnings("try") // the page's example holds the permit without naming it in the block
    void semaphores() throws Exception {
        DistributedSemaphore partnerApi = cerberus.semaphore("partner-api", 4);
        try (Permits permit = partnerApi.acquire(1, Duration.ofSeconds(10))) {
            partner.call(request); // at most 4 calls at once in the whole cluster
        }

        CompletableFuture<Void> called = partnerApi
                .acquireAsync(1, Duration.ofSeconds(10))
                .thenCompose(
                        permit -> partner.callAsync(request).whenComplete((done, failure) -> permit.releaseAsync()));

        called.get(10, TimeUnit.SECONDS);
        assertThat(partner.calls).hasValue(2);
        Poll.until("the async permit given back", TestTimes.millis(5000), () -> partnerApi.availablePermits() == 4);
    }

    @Test
    void fencingPerPermit() throws Exception {
        DistributedSemaphore exporters = cerberus.semaphore("exporters", 2);
        byte[] batch = "batch 1".getBytes(StandardCharsets.UTF_8);
        try (Permits permit = exporters.acquire(1, Duration.ofSeconds(30))) {
            Permit slot = permit.permits().get(0);
            FencedFile progress = new FencedFile(progressDir.resolve(slot.fenceName()));
            progress.write(slot.fence(), batch); // refused once the slot has a newer holder
        }
        assertThat(progressDir.toFile().list()).anyMatch(name -> name.startsWith("exporters#"));
    }

    @Test
    void givingPermitsBackFromAnotherProcess() throws Exception {
        Permits permit = cerberus.semaphore("exports", 8).acquire(3, Duration.ofSeconds(5));
        String id = permit.id(); // pass it on with the work
        // ... in another process:
        boolean freed = cerberus.semaphore("exports", 8).release(id);

        assertThat(freed).isTrue();
        assertThat(cerberus.semaphore("exports", 8).availablePermits()).isEqualTo(8);
        Poll.until("the holder learns", TestTimes.millis(5000), () -> !permit.isValid());
    }

    @Test
    void multiLocks() throws Exception {
        int from = 1;
        int to = 2;
        int cents = 100;
        try (MultiLease both =
                cerberus.multiLock("account:" + from, "account:" + to).acquire(Duration.ofSeconds(5))) {
            ledger.transfer(from, to, cents, both.lease("account:" + from).fencingToken());
        }
        assertThat(ledger.transfers).hasSize(1);
    }

    static final class Partner {
        final AtomicInteger calls = new AtomicInteger();

        void call(Object request) {
            calls.incrementAndGet();
        }

        CompletableFuture<Void> callAsync(Object request) {
            return CompletableFuture.runAsync(() -> calls.incrementAndGet());
        }
    }

    static final class Ledger {
        final List<String> transfers = new CopyOnWriteArrayList<>();

        void transfer(int from, int to, int cents, long fencingToken) {
            transfers.add(from + "->" + to + ": " + cents + " @" + fencingToken);
        }
    }
}
