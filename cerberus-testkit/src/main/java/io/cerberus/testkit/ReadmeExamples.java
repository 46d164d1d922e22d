package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.Leadership;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.idempotency.Outcome;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java examples of the project's README, compiled and run against an engine, so that the code a
 * new user copies first keeps working: the lock example and the idempotency example of "In code"
 * run; the block of one line per engine is compiled only (its servers are the reader's). The
 * examples are found in the README of the source tree (the working directory or a parent holds
 * it); the names an example leaves to the reader ({@code ship}, {@code order}, {@code store},
 * {@code data}, {@code payments}) come from a small frame around it, which records what the
 * example did. The frame is compiled once per JVM.
 */
public final class ReadmeExamples {
    private static final Pattern CONNECT_URI = Pattern.compile("Cerberus\\.connect\\(\"[^\"]*\"\\)");
    private static Class<?> frame;

    private ReadmeExamples() {}

    /** @return the README of the Cerberus source tree around the working directory, if there is one */
    public static Optional<Path> readme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path readme = dir.resolve("README.md");
            if (Files.isRegularFile(readme) && Files.isDirectory(dir.resolve("cerberus-core"))) {
                return Optional.of(readme);
            }
        }
        return Optional.empty();
    }

    /**
     * Runs the README's lock example with {@code uri} in place of its URI, then checks what it
     * did: the order shipped once under the lock, the report written with the lease's fencing token
     * (or, on an engine without fencing tokens, {@code fencingToken()} refused with its reason), and
     * both locks free again afterwards.
     */
    public static void runLockExample(String uri) throws Exception {
        Class<?> examples = frame();
        boolean fencing;
        try (Cerberus probe = Cerberus.connect(uri)) {
            fencing = probe.capabilities().contains(Capability.FENCING);
        }
        @SuppressWarnings("unchecked")
        List<Object> shipped = (List<Object>) examples.getField("shipped").get(null);
        @SuppressWarnings("unchecked")
        List<Long> tokens = (List<Long>) examples.getMethod("tokens").invoke(null);
        shipped.clear();
        tokens.clear();
        Method lock = examples.getMethod("lock", String.class);
        if (fencing) {
            invoke(lock, uri);
            assertThat(tokens)
                    .as("the report written once, with the lease's fencing token")
                    .hasSize(1);
            assertThat(tokens.get(0)).as("a fencing token").isPositive();
        } else {
            assertThatThrownBy(() -> invoke(lock, uri))
                    .as("fencingToken() on an engine without fencing tokens")
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("fencing");
            assertThat(tokens).isEmpty();
        }
        assertThat(shipped)
                .as("the order shipped once, under the lock")
                .containsExactly(examples.getField("order").get(null));
        try (Cerberus other = Cerberus.connect(uri)) {
            for (String name : List.of("order:42", "report")) {
                assertThat(other.lock(name).isLocked())
                        .as("'%s' free after the example", name)
                        .isFalse();
            }
        }
    }

    /**
     * Runs the README's async example on a client of {@code uri}: the report is written with the
     * lease's fencing token (on an engine without fencing tokens the future fails with the reason,
     * and closing the client frees the lock), and the lock is free again afterwards.
     */
    public static void runAsyncExample(String uri) throws Exception {
        Class<?> examples = frame();
        @SuppressWarnings("unchecked")
        List<Long> tokens = (List<Long>) examples.getMethod("tokens").invoke(null);
        tokens.clear();
        Method async = examples.getMethod("async", Cerberus.class);
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            CompletableFuture<?> written = (CompletableFuture<?>) invoke(async, cerberus);
            if (cerberus.capabilities().contains(Capability.FENCING)) {
                written.get(30, TimeUnit.SECONDS);
                assertThat(tokens)
                        .as("the report written once, with a fencing token")
                        .hasSize(1);
                assertThat(tokens.get(0)).as("a fencing token").isPositive();
            } else {
                assertThatThrownBy(() -> written.get(30, TimeUnit.SECONDS))
                        .as("fencingToken() on an engine without fencing tokens")
                        .hasCauseInstanceOf(UnsupportedCapabilityException.class);
            }
        }
        try (Cerberus other = Cerberus.connect(uri)) {
            Poll.until(
                    "'report' free after the async example",
                    TestTimes.millis(10_000),
                    () -> !other.lock("report").isLocked());
        }
    }

    /**
     * Runs the README's leadership example on a client of {@code uri}: the participant is elected
     * and its listener resumes the work with the term (-1 on an engine without fencing tokens);
     * closing it steps down, and the listener pauses the work.
     */
    public static void runLeadershipExample(String uri) throws Exception {
        Class<?> examples = frame();
        Object invoices = examples.getField("invoices").get(null);
        @SuppressWarnings("unchecked")
        List<String> seen = (List<String>) invoices.getClass().getField("seen").get(invoices);
        seen.clear();
        Method leadership = examples.getMethod("leadership", Cerberus.class);
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            Leadership billing = (Leadership) invoke(leadership, cerberus);
            assertThat(billing.awaitLeadership(TestTimes.millis(10_000)))
                    .as("elected")
                    .isTrue();
            long term = cerberus.capabilities().contains(Capability.FENCING) ? billing.term() : -1;
            Poll.until("the work resumed", TestTimes.millis(5000), () -> !seen.isEmpty());
            billing.close();
            Poll.until("the work paused", TestTimes.millis(5000), () -> seen.size() >= 2);
            assertThat(seen).containsExactly("resume " + term, "pause");
        }
    }

    /**
     * Runs the README's scheduled job example twice on a client of {@code uri}: the first run sends
     * (with the lease's fencing token, -1 on an engine without them), the second, within the 30 s the
     * lock is kept after a run began, is skipped.
     */
    public static void runExclusiveExample(String uri) throws Exception {
        Class<?> examples = frame();
        Object reminders = examples.getField("reminders").get(null);
        @SuppressWarnings("unchecked")
        List<Long> sent = (List<Long>) reminders.getClass().getField("sent").get(reminders);
        sent.clear();
        Method exclusive = examples.getMethod("exclusive", Cerberus.class);
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            boolean fencing = cerberus.capabilities().contains(Capability.FENCING);
            if (fencing) {
                invoke(exclusive, cerberus);
                invoke(exclusive, cerberus);
                assertThat(sent)
                        .as("sent once: the second tick finds the lock kept")
                        .hasSize(1);
                assertThat(sent.get(0)).as("a fencing token").isPositive();
            } else {
                assertThatThrownBy(() -> invoke(exclusive, cerberus))
                        .as("fencingToken() on an engine without fencing tokens")
                        .isInstanceOf(UnsupportedCapabilityException.class);
                assertThat(sent).isEmpty();
            }
        }
    }

    /**
     * Runs the README's semaphore and multi-lock example on a client of {@code uri}: the partner is
     * called once under a permit, the transfer made once under both locks, and nothing stays held.
     */
    public static void runSemaphoreExample(String uri) throws Exception {
        Class<?> examples = frame();
        Object partner = examples.getField("partner").get(null);
        AtomicInteger calls =
                (AtomicInteger) partner.getClass().getField("calls").get(partner);
        Object ledger = examples.getField("ledger").get(null);
        @SuppressWarnings("unchecked")
        List<String> transfers =
                (List<String>) ledger.getClass().getField("transfers").get(ledger);
        int callsBefore = calls.get();
        int transfersBefore = transfers.size();
        Method semaphore = examples.getMethod("semaphore", Cerberus.class);
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            invoke(semaphore, cerberus);
            assertThat(calls.get() - callsBefore).as("partner calls").isEqualTo(1);
            assertThat(transfers.size() - transfersBefore).as("transfers").isEqualTo(1);
            assertThat(cerberus.semaphore("partner-api", 4).availablePermits())
                    .as("the permit was given back")
                    .isEqualTo(4);
            assertThat(cerberus.multiLock("account:1", "account:2").tryAcquire(Duration.ZERO))
                    .as("both locks were released")
                    .isPresent()
                    .hasValueSatisfying(io.cerberus.MultiLease::close);
        }
    }

    /**
     * Runs the README's idempotency example twice on {@code cerberus}: the first run charges and is
     * {@code EXECUTED}, the second finds the record and is {@code REPLAYED} with the same receipt.
     */
    public static void runIdempotencyExample(Cerberus cerberus) throws Exception {
        Class<?> examples = frame();
        AtomicInteger charges = (AtomicInteger) examples.getMethod("charges").invoke(null);
        int before = charges.get();
        Method idempotency = examples.getMethod("idempotency", Cerberus.class);
        Outcome<?> first = (Outcome<?>) invoke(idempotency, cerberus);
        Outcome<?> second = (Outcome<?>) invoke(idempotency, cerberus);
        assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(second)
                .as("the duplicate gets the stored receipt")
                .isEqualTo(new Outcome<>(first.value(), Outcome.Status.REPLAYED));
        assertThat(charges.get() - before).as("cards charged").isEqualTo(1);
    }

    private static Object invoke(Method method, Object argument) throws Exception {
        try {
            return method.invoke(null, argument);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    private static synchronized Class<?> frame() throws IOException, ClassNotFoundException {
        if (frame == null) {
            Path readme = readme().orElseThrow(() -> new IllegalStateException(
                    "no README.md of the Cerberus source tree in " + Path.of("").toAbsolutePath() + " or a parent"));
            frame = compile(source(Files.readString(readme, StandardCharsets.UTF_8)));
        }
        return frame;
    }

    /** @return the frame's source: the three README blocks as method bodies, with the names they leave to the reader */
    static String source(String readme) {
        List<String> blocks = JavaSources.javaBlocks(readme);
        String lock = block(blocks, "cerberus.lock(", "the lock example");
        String idempotency = block(blocks, "cerberus.idempotency(", "the idempotency example");
        String engines = block(blocks, ".failover(", "the block of one line per engine");
        String async = block(blocks, ".acquireAsync(", "the async example");
        String leadership = block(blocks, ".leadership(", "the leadership example");
        String exclusive = block(blocks, ".runExclusively(", "the scheduled job example");
        String fencing = block(blocks, "FencedRows.of(", "the fencing example");
        String semaphore = block(blocks, ".semaphore(", "the semaphore and multi-lock example");
        Matcher connect = CONNECT_URI.matcher(lock);
        if (!connect.find()) {
            throw new IllegalStateException(
                    "the README's lock example connects with no Cerberus.connect(\"URI\"):\n" + lock);
        }
        lock = connect.replaceFirst("Cerberus.connect(uri)");
        return """
                package readme;

                import io.cerberus.*;
                import io.cerberus.fencing.*;
                import io.cerberus.idempotency.*;
                import java.time.Duration;
                import java.util.List;
                import java.util.Map;
                import java.util.concurrent.CompletableFuture;
                import java.util.concurrent.CopyOnWriteArrayList;
                import java.util.concurrent.atomic.AtomicInteger;

                public final class Examples {
                    public static final List<Object> shipped = new CopyOnWriteArrayList<>();
                    public static final Object order = "order 42";
                    static final Object data = "the report";
                    static final Store store = new Store();
                    static final Payments payments = new Payments();
                    public static final Invoices invoices = new Invoices();
                    public static final Reminders reminders = new Reminders();
                    public static final Partner partner = new Partner();
                    static final Object request = "a request";
                    public static final Ledger ledger = new Ledger();

                    public static final class Partner {
                        public final AtomicInteger calls = new AtomicInteger();

                        void call(Object request) {
                            calls.incrementAndGet();
                        }
                    }

                    public static final class Ledger {
                        public final List<String> transfers = new CopyOnWriteArrayList<>();

                        void transfer(int from, int to, int cents) {
                            transfers.add(from + "->" + to + ": " + cents);
                        }
                    }

                    public static final class Reminders {
                        public final List<Long> sent = new CopyOnWriteArrayList<>();

                        void send(long fencingToken) {
                            sent.add(fencingToken);
                        }
                    }

                    public static final class Invoices {
                        public final List<String> seen = new CopyOnWriteArrayList<>();

                        void resume(long term) {
                            seen.add("resume " + term);
                        }

                        void pause() {
                            seen.add("pause");
                        }
                    }

                    static final class Store {
                        final List<Long> tokens = new CopyOnWriteArrayList<>();

                        void write(Object data, long fencingToken) {
                            tokens.add(fencingToken);
                        }

                        CompletableFuture<Void> writeAsync(Object data, long fencingToken) {
                            return CompletableFuture.runAsync(() -> tokens.add(fencingToken));
                        }
                    }

                    static final class Payments {
                        final AtomicInteger charges = new AtomicInteger();

                        String charge(int order, int cents) {
                            return "receipt " + order + "/" + cents + " #" + charges.incrementAndGet();
                        }
                    }

                    static void ship(Object order) {
                        shipped.add(order);
                    }

                    public static List<Long> tokens() {
                        return store.tokens;
                    }

                    public static AtomicInteger charges() {
                        return payments.charges;
                    }

                    public static void lock(String uri) throws Exception {
                %s
                    }

                    public static Outcome<String> idempotency(Cerberus cerberus) throws Exception {
                %s
                        return outcome;
                    }

                    static void engineLines() {
                %s
                    }

                    public static CompletableFuture<Void> async(Cerberus cerberus) {
                %s
                        return written;
                    }

                    public static Leadership leadership(Cerberus cerberus) {
                %s
                        return billing;
                    }

                    public static void exclusive(Cerberus cerberus) {
                %s
                    }

                    static void fencing(Cerberus cerberus, java.sql.Connection connection, java.nio.file.Path report)
                            throws Exception {
                %s
                    }

                    public static void semaphore(Cerberus cerberus) throws Exception {
                %s
                    }
                }
                """.formatted(lock, idempotency, engines, async, leadership, exclusive, fencing, semaphore);
    }

    private static String block(List<String> blocks, String marker, String what) {
        return blocks.stream()
                .filter(block -> block.contains(marker))
                .findFirst()
                .orElseThrow(() ->
                        new IllegalStateException("the README has no Java block with " + marker + " (" + what + ")"));
    }

    static Class<?> compile(String source) throws ClassNotFoundException {
        return JavaSources.compile("readme.Examples", source, "the README's Java examples");
    }
}
