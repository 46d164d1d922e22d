package io.cerberus.idempotency;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Lets the same business operation take effect once. The first call with a key claims it in the
 * store (IN_PROGRESS, under a lease renewed while the operation runs), runs the operation, and
 * stores its result for the retention window; a duplicate gets that result replayed without
 * running anything. Obtain one with {@link io.cerberus.Cerberus#idempotency(IdempotencyOptions)}.
 * Thread-safe.
 *
 * <p>Invariants: a store call resent after a lost answer carries the attempt's token, and the store
 * recognises it as the attempt's own; an attempt's renewal and its settlement (complete, fail,
 * release) never overlap, so a renewal cannot make its own completion fail; renewals run apart
 * from each other, so one slow store call delays no other attempt; an attempt dropped without
 * being settled stops being renewed once it is garbage, and its key is free after the lease; a
 * result larger than the store keeps is stored as "ran, result not kept", so a duplicate never
 * runs again; a retention the store cannot keep is refused before anything runs.
 *
 * <pre>{@code
 * IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());
 * Outcome<String> charged = guard.execute(IdempotencyKey.of("charge", header, body), Duration.ofDays(1),
 *         () -> payments.charge(body));
 * }</pre>
 */
public final class IdempotencyGuard implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(IdempotencyGuard.class.getName());
    /** The longest retention a guard takes; {@code null} keeps a result for ever. */
    public static final Duration MAX_RETENTION = Duration.ofDays(365L * 1000);

    /** Draws the attempts' tokens. */
    private static final SecureRandom TOKENS = new SecureRandom();
    /** Starts the text of a result stored in place of one too large for the store. */
    private static final String NOT_KEPT = "cerberus:result-not-kept:";

    private final IdempotencyStore store;
    private final String namespace;
    private final String engine;
    private final IdempotencyOptions options;
    private final ScheduledExecutorService renewer;
    private final boolean ownsRenewer;
    private final LongAdder unguarded = new LongAdder();
    /** Store calls of {@link #executeAsync} running at once, at most, in the JVM; more queue. */
    private static final int ASYNC_THREADS = 16;
    /** The steps of every guard's {@link #executeAsync}: its store calls, which may block for one request. */
    private static final ThreadPoolExecutor ASYNC_STEPS = asyncSteps();

    /**
     * A guard with a renewal thread of its own, ended by {@link #close()}. Clients share one
     * thread between their guards: prefer {@link io.cerberus.Cerberus#idempotency(IdempotencyOptions)}.
     *
     * @param store the engine's store
     * @param namespace the client's namespace: keys of different namespaces never meet
     * @param engine the engine's URI, without passwords, for messages
     * @param options the guard's behaviour
     */
    public IdempotencyGuard(IdempotencyStore store, String namespace, String engine, IdempotencyOptions options) {
        this(store, namespace, engine, options, newRenewer(), true);
    }

    /**
     * A guard whose attempts are renewed on a scheduler it shares (and does not shut down).
     *
     * @param store the engine's store
     * @param namespace the client's namespace
     * @param engine the engine's URI, without passwords, for messages
     * @param options the guard's behaviour
     * @param renewer runs the lease renewals, every lease/3 per running attempt
     */
    public IdempotencyGuard(
            IdempotencyStore store,
            String namespace,
            String engine,
            IdempotencyOptions options,
            ScheduledExecutorService renewer) {
        this(store, namespace, engine, options, Arguments.notNull("renewer", renewer), false);
    }

    private IdempotencyGuard(
            IdempotencyStore store,
            String namespace,
            String engine,
            IdempotencyOptions options,
            ScheduledExecutorService renewer,
            boolean ownsRenewer) {
        this.store = Arguments.notNull("store", store);
        this.namespace = Arguments.notNull("namespace", namespace);
        this.engine = engine;
        this.options = Arguments.notNull("options", options);
        this.renewer = renewer;
        this.ownsRenewer = ownsRenewer;
    }

    /** @return a one-thread daemon scheduler that times lease renewals (the calls run elsewhere) */
    public static ScheduledExecutorService newRenewer() {
        java.util.concurrent.ScheduledThreadPoolExecutor executor =
                new java.util.concurrent.ScheduledThreadPoolExecutor(1, task -> {
                    Thread thread = new Thread(task, "cerberus-idempotency-renewer");
                    thread.setDaemon(true);
                    return thread;
                });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** @return how many operations ran without the guard because the store was down (FAIL_OPEN) */
    public long unguardedRuns() {
        return unguarded.sum();
    }

    /**
     * Runs a text-valued operation once per key (see {@link #execute(IdempotencyKey, Duration, ResultCodec, Callable)}).
     */
    public Outcome<String> execute(IdempotencyKey key, Duration retention, Callable<String> operation)
            throws Exception {
        return execute(key, retention, ResultCodec.STRING, operation);
    }

    /**
     * Runs the operation if this key has not run yet; else replays the stored result.
     *
     * @param key the operation's key
     * @param retention how long the result is kept for duplicates; null for ever
     * @param codec stores and replays the result
     * @param operation the work
     * @return the result and whether it ran here
     * @throws IdempotencyKeyMismatchException if the key was used with another payload
     * @throws OperationInProgressException if another attempt runs now (REJECT, or WAIT ran out)
     * @throws IdempotencyStoreUnavailableException if the store is down and the guard fails closed
     * @throws IdempotencyCompletionException if the operation ran but its result could not be stored
     * @throws ReplayedFailureException if the first attempt failed with a remembered exception type
     * @throws ResultNotKeptException if the first attempt ran but its result could not be kept
     * @throws IllegalStateException if the guard is closed (nothing ran)
     * @throws Exception what the operation threw, when it ran here
     */
    public <T> Outcome<T> execute(IdempotencyKey key, Duration retention, ResultCodec<T> codec, Callable<T> operation)
            throws Exception {
        Arguments.notNull("operation", operation);
        try (IdempotencyAttempt<T> attempt = begin(key, retention, codec)) {
            if (!attempt.mustRun()) {
                return new Outcome<>(attempt.replayed(), Outcome.Status.REPLAYED);
            }
            T result;
            try {
                result = operation.call();
            } catch (Exception | Error failure) {
                attempt.fail(failure);
                throw failure;
            }
            return attempt.complete(result);
        }
    }

    /**
     * Runs the operation once per key in a transaction of its own on {@code dataSource}, and stores its
     * result in that same transaction: the result commits if and only if the operation's effect does,
     * so no crash, lost answer or store failure between the two can make it run twice or leave a
     * result without its effect. The claim is made first on the engine's own connection (a duplicate
     * sees it at once); then a connection of {@code dataSource} in a transaction, handed to the operation
     * for all of its changes; then the result, written on it; then the commit. A failure (or a rollback)
     * frees the key at once, as in {@code execute}. The guard's engine must be a JDBC engine on the same
     * database as {@code dataSource} (docs/IDEMPOTENCY.md, "Exactly once with your data").
     *
     * @param key the operation's key
     * @param retention how long the result is kept for duplicates; null for ever
     * @param codec stores and replays the result
     * @param dataSource the database of the operation's changes, and of the guard's JDBC engine
     * @param operation the work, on the connection it is given (not committed, not closed by it)
     * @return the result and whether it ran here
     * @throws IllegalStateException if the guard's engine keeps its records apart from SQL databases
     *     (nothing ran), the guard is closed (nothing ran), or the connection cannot see the claim (another
     *     database: rolled back)
     * @throws IdempotencyCompletionException if the lease ran out and another attempt took the key
     *     before the result was written: rolled back, the other attempt runs the operation
     * @throws SQLException as the database reports a failure of the connection, the result's write or
     *     the commit: rolled back (a commit whose answer was lost may have committed both: a retry then
     *     replays)
     * @throws Exception what the operation threw (rolled back), and as {@code execute} throws
     */
    public <T> Outcome<T> executeInTransaction(
            IdempotencyKey key,
            Duration retention,
            ResultCodec<T> codec,
            DataSource dataSource,
            TransactionalOperation<T> operation)
            throws Exception {
        Arguments.notNull("dataSource", dataSource);
        Arguments.notNull("operation", operation);
        if (!store.completesInTransactions()) {
            throw new IllegalStateException("the idempotency records of " + engine + " are not kept in a SQL database,"
                    + " so they cannot commit with your transaction; use a guard of a JDBC engine on the database of"
                    + " the DataSource; nothing ran");
        }
        try (IdempotencyAttempt<T> attempt = begin(key, retention, codec)) {
            if (!attempt.mustRun()) {
                return new Outcome<>(attempt.replayed(), Outcome.Status.REPLAYED);
            }
            return InTransaction.run(attempt, dataSource, operation);
        }
    }

    /**
     * Claims the key for an operation the caller runs itself (the two-call form: begin, then
     * complete or fail). A duplicate gets an attempt that replays the first result.
     *
     * @param key the operation's key
     * @param retention how long the result is kept for duplicates; null for ever
     * @param codec stores and replays the result
     * @return an attempt that must run the operation, or one that replays
     * @throws IdempotencyKeyMismatchException if the key was used with another payload
     * @throws OperationInProgressException if another attempt runs now (REJECT, or WAIT ran out)
     * @throws IdempotencyStoreUnavailableException if the store is down and the guard fails closed
     * @throws ReplayedFailureException if the first attempt failed with a remembered exception type
     * @throws ResultNotKeptException if the first attempt ran but its result could not be kept
     * @throws IllegalStateException if the guard is closed, before or while waiting for another attempt (nothing
     *     ran; a claim made as it closed is given back)
     * @throws InterruptedException if interrupted while waiting for another attempt (WAIT)
     */
    public <T> IdempotencyAttempt<T> begin(IdempotencyKey key, Duration retention, ResultCodec<T> codec)
            throws InterruptedException {
        Claiming<T> claiming = new Claiming<>(key, retention, codec);
        while (true) {
            IdempotencyAttempt<T> attempt = claiming.next();
            if (attempt != null) {
                return attempt;
            }
            // A store that notifies is still asked again every 2 s: an expiry (a crashed owner) notifies nobody.
            long wait = store.notifiesChanges() ? 2_000 : claiming.pauseMillis;
            try {
                store.awaitChange(claiming.id, Duration.ofMillis(Math.max(1, Math.min(wait, claiming.leftMillis()))));
            } catch (EngineUnavailableException e) {
                return storeDown(key, e);
            }
            claiming.waited();
        }
    }

    /**
     * Like {@link #execute(IdempotencyKey, Duration, ResultCodec, Callable)} for an operation that
     * completes later, without holding a thread while a duplicate waits for the first attempt (WAIT):
     * the store is asked again on a timer (20 ms doubling to 500 ms), its calls made on a JVM-wide
     * pool of at most 16 threads. The operation's stage settles the key: its value is stored and replayed; its failure
     * is remembered or frees the key, as in {@code execute}.
     *
     * <p>Cancelling the returned future before the operation starts stops the wait (nothing runs, the
     * key is not claimed, or is freed); once the operation runs it is not cancelled, and its result is
     * stored all the same, so a retry replays it.
     *
     * @param key the operation's key
     * @param retention how long the result is kept for duplicates; null for ever
     * @param codec stores and replays the result
     * @param operation starts the work; called at most once, on a thread of the guard's pool
     * @return the future outcome; it fails as {@code execute} throws
     * @throws IllegalArgumentException if the key, codec or operation is null, or the retention is not kept
     */
    public <T> CompletableFuture<Outcome<T>> executeAsync(
            IdempotencyKey key,
            Duration retention,
            ResultCodec<T> codec,
            Supplier<? extends CompletionStage<T>> operation) {
        Arguments.notNull("operation", operation);
        Claiming<T> claiming = new Claiming<>(key, retention, codec);
        CompletableFuture<Outcome<T>> outcome = new CompletableFuture<>();
        step(() -> claimAsync(claiming, operation, outcome));
        return outcome;
    }

    /** One step of {@link #executeAsync}: claim (or wait on the timer), then run the operation. */
    private <T> void claimAsync(
            Claiming<T> claiming,
            Supplier<? extends CompletionStage<T>> operation,
            CompletableFuture<Outcome<T>> outcome) {
        IdempotencyAttempt<T> attempt;
        try {
            if (outcome.isDone()) {
                return; // cancelled while waiting for another attempt
            }
            attempt = claiming.next();
            if (attempt == null) {
                long pause = Math.max(1, Math.min(claiming.pauseMillis, claiming.leftMillis()));
                claiming.waited();
                stepAfter(pause, () -> claimAsync(claiming, operation, outcome));
                return;
            }
        } catch (RuntimeException | Error e) {
            outcome.completeExceptionally(e);
            return;
        }
        if (!attempt.mustRun()) {
            attempt.close();
            outcome.complete(new Outcome<>(attempt.replayed(), Outcome.Status.REPLAYED));
            return;
        }
        if (outcome.isDone()) {
            attempt.close(); // cancelled before it ran: the key is free again
            return;
        }
        CompletionStage<T> running;
        try {
            running = Arguments.notNull("the operation's stage", operation.get());
        } catch (RuntimeException | Error failure) {
            settled(attempt, null, failure, outcome);
            return;
        }
        running.whenComplete((value, failure) -> step(() -> settled(attempt, value, failure, outcome)));
    }

    /** Stores what the operation of an async attempt gave (or frees or remembers its failure). */
    private static <T> void settled(
            IdempotencyAttempt<T> attempt, T value, Throwable failure, CompletableFuture<Outcome<T>> outcome) {
        try (attempt) {
            if (failure == null) {
                outcome.complete(attempt.complete(value));
                return;
            }
            Throwable cause =
                    failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            attempt.fail(cause);
            outcome.completeExceptionally(cause);
        } catch (RuntimeException | Error e) {
            outcome.completeExceptionally(e);
        }
    }

    /** Runs a step of an async call on the JVM-wide pool (on this thread if the pool refuses it). */
    private static void step(Runnable step) {
        try {
            ASYNC_STEPS.execute(step);
        } catch (RejectedExecutionException e) {
            step.run();
        }
    }

    /**
     * Runs a step after {@code millis}, timed by the JVM's delayer, not the guard's scheduler: a scheduler
     * shut down (the guard or its client closed) drops what it holds, and the call would never end. The
     * step finds a closed guard itself and ends the call with that.
     */
    private static void stepAfter(long millis, Runnable step) {
        CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS, IdempotencyGuard::step)
                .execute(step);
    }

    private static ThreadPoolExecutor asyncSteps() {
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                ASYNC_THREADS, ASYNC_THREADS, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
                    Thread thread = new Thread(task, "cerberus-idempotency-async-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * One claim of a key, a store call at a time: the blocking {@link #begin} and
     * {@link #executeAsync} both run it, and differ only in how they wait for another attempt.
     */
    private final class Claiming<T> {
        final IdempotencyKey key;
        final Duration retention;
        final ResultCodec<T> codec;
        final String id;
        final String token = newToken();
        final long deadline = System.nanoTime() + options.waitAtMost().toNanos();
        /** The next wait for another attempt, without notifications; doubles to 500 ms. */
        long pauseMillis = 20;

        Claiming(IdempotencyKey key, Duration retention, ResultCodec<T> codec) {
            this.key = Arguments.notNull("key", key);
            this.codec = Arguments.notNull("codec", codec);
            checkRetention(retention);
            this.retention = retention;
            this.id = namespace + "/" + key.id();
        }

        /**
         * Claims the key, or reads what holds it.
         *
         * @return the attempt (to run, or to replay), or null to wait for another attempt and call again
         */
        IdempotencyAttempt<T> next() {
            ensureOpen();
            Optional<IdempotencyRecord> existing;
            long[] askedAt = new long[1];
            try {
                existing = withRetries("claim " + key, () -> {
                    askedAt[0] = System.nanoTime();
                    return store.claim(id, key.fingerprint(), token, options.lease());
                });
            } catch (EngineUnavailableException e) {
                return storeDown(key, e);
            }
            if (existing.isEmpty()) {
                Claim<T> claim;
                try {
                    claim = new Claim<>(key, id, token, retention, codec, askedAt[0]);
                } catch (RejectedExecutionException closedMeanwhile) {
                    // closed between the check and the claim: nothing renews it, so it is given back
                    freeQuietly(key, id, token);
                    throw closed(key);
                }
                IdempotencyAttempt<T> attempt = IdempotencyAttempt.owned(Outcome.Status.EXECUTED, claim);
                claim.watch(attempt);
                return attempt;
            }
            IdempotencyRecord record = existing.get();
            if (!record.fingerprint().equals(key.fingerprint())) {
                throw new IdempotencyKeyMismatchException("idempotency key " + key
                        + " was first used with another payload"
                        + " (fingerprint " + shortened(record.fingerprint()) + ", now " + shortened(key.fingerprint())
                        + "); a reused key is a client error, so nothing ran");
            }
            if (record.completed()) {
                if (record.failure()) {
                    String text = new String(record.result(), StandardCharsets.UTF_8);
                    if (text.startsWith(NOT_KEPT)) {
                        throw new ResultNotKeptException(
                                "the first attempt of " + key + " ran, but " + text.substring(NOT_KEPT.length()));
                    }
                    throw new ReplayedFailureException("the first attempt of " + key + " failed: " + text);
                }
                return IdempotencyAttempt.replay(codec.decode(record.result()));
            }
            if (options.whenInProgress() == IdempotencyOptions.InProgress.REJECT || leftMillis() <= 0) {
                throw new OperationInProgressException("another attempt of " + key + " is running now"
                        + (options.whenInProgress() == IdempotencyOptions.InProgress.WAIT
                                ? " and did not finish within " + Durations.format(options.waitAtMost())
                                : "")
                        + "; try again later");
            }
            return null;
        }

        /** @return what is left of the wait for another attempt, in milliseconds (0 or less: none) */
        long leftMillis() {
            long left = deadline - System.nanoTime();
            return left <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(left));
        }

        /** A wait for another attempt ended: the next one is longer. */
        void waited() {
            pauseMillis = Math.min(pauseMillis * 2, 500);
        }
    }

    /** An attempt that owns its key: renewed ({@link AttemptRenewal}) until it is completed, failed or released. */
    private final class Claim<T> implements IdempotencyAttempt.Settlement<T> {
        private final IdempotencyKey key;
        private final String id;
        private final String token;
        private final Duration retention;
        private final ResultCodec<T> codec;
        private final AttemptRenewal renewal;

        Claim(
                IdempotencyKey key,
                String id,
                String token,
                Duration retention,
                ResultCodec<T> codec,
                long claimAskedAt) {
            this.key = key;
            this.id = id;
            this.token = token;
            this.retention = retention;
            this.codec = codec;
            this.renewal = new AttemptRenewal(store, key, id, token, options.lease(), claimAskedAt, renewer);
        }

        void watch(IdempotencyAttempt<T> attempt) {
            renewal.watch(attempt);
        }

        @Override
        public Outcome<T> complete(T result) {
            renewal.stop();
            byte[] encoded;
            RuntimeException unencodable = null;
            try {
                encoded = codec.encode(result);
            } catch (RuntimeException e) {
                unencodable = e;
                encoded = notKept("its result could not be encoded (" + e.getMessage() + ")");
            }
            boolean failure = unencodable != null;
            if (!failure) {
                byte[] kept = kept(encoded);
                failure = kept != encoded;
                encoded = kept;
            }
            store(encoded, failure);
            if (unencodable != null) {
                throw new IdempotencyCompletionException(
                        "the operation of " + key + " ran, but its result could not be encoded ("
                                + unencodable.getMessage() + "); duplicates are told it ran and do not run it again",
                        unencodable);
            }
            return new Outcome<>(result, Outcome.Status.EXECUTED);
        }

        /** @return the encoded result, or the text that says it was too large for the store to keep */
        private byte[] kept(byte[] encoded) {
            if (encoded.length <= store.maxResultBytes()) {
                return encoded;
            }
            LOG.log(
                    Level.WARNING,
                    "the result of " + key + " is " + encoded.length + " bytes, more than the "
                            + store.maxResultBytes() + " bytes " + engine
                            + " keeps in a record; duplicates are told it ran, without it");
            return notKept("its result of " + encoded.length + " bytes was larger than the " + store.maxResultBytes()
                    + " bytes " + engine + " keeps");
        }

        @Override
        public boolean completesInTransactions() {
            return store.completesInTransactions();
        }

        /**
         * Completes the record in the caller's transaction, once: a failed statement spoils that transaction, so
         * nothing is resent. Unlike {@link #complete}, a result that cannot be encoded stores nothing: the caller
         * rolls the effect back with it.
         */
        @Override
        public Outcome<T> completeIn(Connection connection, T result) throws SQLException {
            renewal.stop();
            byte[] encoded;
            try {
                encoded = codec.encode(result);
            } catch (RuntimeException e) {
                throw new IdempotencyCompletionException(
                        "the operation of " + key + " ran in your transaction, but its result could not be encoded ("
                                + e.getMessage() + "): nothing was stored; roll the transaction back",
                        e);
            }
            byte[] kept = kept(encoded);
            storeIn(connection, kept, kept != encoded);
            return new Outcome<>(result, Outcome.Status.EXECUTED);
        }

        @Override
        public void failIn(Connection connection, Throwable error) throws SQLException {
            renewal.stop();
            storeIn(connection, failureText(error, true), true);
        }

        @Override
        public void completeNotKeptIn(Connection connection, String why) throws SQLException {
            renewal.stop();
            storeIn(connection, notKept(why), true);
        }

        /** Completes the record in the caller's transaction, once: a failed statement spoils it, so nothing is resent. */
        private void storeIn(Connection connection, byte[] bytes, boolean failure) throws SQLException {
            if (!store.completeInTransaction(connection, id, token, bytes, failure, retention)) {
                throw notCompletedInTransaction();
            }
        }

        /** @return why a completion in the caller's transaction changed nothing, as the store's own connection tells */
        private RuntimeException notCompletedInTransaction() {
            Optional<IdempotencyRecord> now;
            try {
                now = withRetries("read " + key, () -> store.read(id));
            } catch (RuntimeException e) {
                now = Optional.empty();
            }
            if (now.isPresent() && !now.get().completed() && now.get().token().equals(token)) {
                return new IllegalStateException("the completion of " + key + " found no claim of this attempt on"
                        + " the connection given, though " + engine + " has it: the connection is not to the store's"
                        + " database, or its transaction's snapshot was taken before the claim (REPEATABLE READ or"
                        + " SERIALIZABLE, begun before the guard); nothing was stored: roll the transaction back");
            }
            return new IdempotencyCompletionException(
                    "the operation of " + key + " ran in your transaction, but its lease of "
                            + Durations.format(options.lease())
                            + " ran out and another attempt took the key: nothing was stored; roll the transaction"
                            + " back (the other attempt runs the operation)",
                    null);
        }

        @Override
        public void completeNotKept(String why) {
            renewal.stop();
            store(notKept(why), true);
        }

        /**
         * Completes the record with these bytes; the caller is told when they could not be stored. The operation has
         * run, so a store that cannot be reached is tried again, past {@code storeAttempts}, for as long as the claim
         * lasts: a completion that gives up leaves the key to a duplicate once the lease ends, which would run the
         * operation again. The store is the judge: a completion that reaches it after the lease is refused.
         */
        private void store(byte[] bytes, boolean failure) {
            boolean stored;
            try {
                stored = withRetries(
                        "complete " + key,
                        () -> store.complete(id, token, bytes, failure, retention),
                        renewal.heldUntilNanos());
            } catch (EngineUnavailableException e) {
                throw new IdempotencyCompletionException(
                        "the operation of " + key + " ran, but its result could not be stored on " + engine
                                + ": a retry after the lease of " + Durations.format(options.lease())
                                + " may run it again",
                        e);
            } catch (RuntimeException e) {
                throw new IdempotencyCompletionException(
                        "the operation of " + key + " ran, but its result was refused by the store (" + e.getMessage()
                                + "): a retry after the lease of " + Durations.format(options.lease())
                                + " may run it again",
                        e);
            }
            if (!stored) {
                throw new IdempotencyCompletionException(
                        "the operation of " + key + " ran, but its lease of "
                                + Durations.format(options.lease()) + " ran out first"
                                + (renewal.lost() ? " (a renewal was refused)" : "")
                                + " and another attempt may have taken the key: its result was not stored",
                        null);
            }
        }

        @Override
        public void fail(Throwable error, boolean remember) {
            renewal.stop();
            settleFailure(key, id, token, retention, error, remember);
        }

        @Override
        public void release() {
            renewal.stop();
            freeQuietly(key, id, token);
        }
    }

    /** Frees a claimed key; if the store cannot be reached, the key is free again after its lease (logged). */
    private void freeQuietly(IdempotencyKey key, String id, String token) {
        try {
            withRetries("release " + key, () -> store.release(id, token));
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "the key " + key + " could not be released on " + engine + "; it is free again after the lease of "
                            + Durations.format(options.lease()),
                    e);
        }
    }

    /** @throws IllegalStateException if the guard is closed: its scheduler (its own, or the client's) is shut down */
    private void ensureOpen() {
        if (renewer.isShutdown()) {
            throw new IllegalStateException("this idempotency guard is closed"
                    + (ownsRenewer ? "" : " (its client, or the scheduler it was given, is closed)") + "; nothing ran");
        }
    }

    private IllegalStateException closed(IdempotencyKey key) {
        return new IllegalStateException(
                "this idempotency guard was closed while claiming " + key + "; the key was given back and nothing ran");
    }

    /** @return a new attempt token: 128 random bits as 32 hex characters, like a lock's owner token */
    private static String newToken() {
        byte[] bytes = new byte[16];
        TOKENS.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** The attempt of a fail-open guard whose store is down: it runs unguarded and stores nothing. */
    private static final class Unguarded<T> implements IdempotencyAttempt.Settlement<T> {
        @Override
        public Outcome<T> complete(T result) {
            return new Outcome<>(result, Outcome.Status.UNGUARDED);
        }

        @Override
        public void completeNotKept(String why) {}

        @Override
        public void fail(Throwable error, boolean remember) {}

        @Override
        public void release() {}

        @Override
        public boolean completesInTransactions() {
            return true; // nothing to store: the operation ran unguarded
        }

        @Override
        public Outcome<T> completeIn(Connection connection, T result) {
            return new Outcome<>(result, Outcome.Status.UNGUARDED);
        }

        @Override
        public void failIn(Connection connection, Throwable error) {}

        @Override
        public void completeNotKeptIn(Connection connection, String why) {}
    }

    private void settleFailure(
            IdempotencyKey key, String id, String token, Duration retention, Throwable failure, boolean remember) {
        try {
            if (remember || remembered(failure)) {
                byte[] text = failureText(failure, remember);
                withRetries("remember the failure of " + key, () -> store.complete(id, token, text, true, retention));
            } else {
                withRetries("release " + key, () -> store.release(id, token));
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            LOG.log(
                    Level.WARNING,
                    "the operation of " + key + " failed, and its key could not be settled on " + engine
                            + "; it is free again after the lease of " + Durations.format(options.lease()),
                    e);
        }
    }

    /** @return the text stored for a failure that duplicates are told of, short enough for any store */
    private static byte[] failureText(Throwable failure, boolean tookEffect) {
        String said = failure.getClass().getName() + ": " + failure.getMessage()
                + (tookEffect ? " (it took effect all the same)" : "");
        return (said.length() > 4096 ? said.substring(0, 4096) + "..." : said).getBytes(StandardCharsets.UTF_8);
    }

    /** @return the text stored in place of a result that cannot be kept, read back by {@link #begin} */
    private static byte[] notKept(String why) {
        return (NOT_KEPT + why + ", so it cannot be replayed; the operation does not run again")
                .getBytes(StandardCharsets.UTF_8);
    }

    private void checkRetention(Duration retention) {
        if (retention == null) {
            return;
        }
        if (retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("the retention must be positive (or null for ever), was " + retention);
        }
        if (retention.compareTo(MAX_RETENTION) > 0) {
            throw new IllegalArgumentException("the retention must be at most " + MAX_RETENTION.toDays()
                    + " days (or null for ever), was " + retention);
        }
        Optional<Duration> most = store.maxRetention();
        if (most.isPresent() && retention.compareTo(most.get()) > 0) {
            throw new IllegalArgumentException(
                    "the retention must be at most " + most.get().toDays() + " days on " + engine
                            + " (or null for ever), was " + retention + "; nothing ran");
        }
    }

    private boolean remembered(Throwable failure) {
        return options.remember().stream().anyMatch(type -> type.isInstance(failure));
    }

    private <T> IdempotencyAttempt<T> storeDown(IdempotencyKey key, EngineUnavailableException e) {
        if (options.whenStoreDown() == IdempotencyOptions.StoreDown.FAIL_CLOSED) {
            throw new IdempotencyStoreUnavailableException(
                    "the idempotency store " + engine + " could not be reached after " + options.storeAttempts()
                            + " tries; " + key + " did not run (the guard fails closed)",
                    e);
        }
        unguarded.increment();
        LOG.log(
                Level.WARNING,
                "the idempotency store " + engine + " could not be reached; running " + key
                        + " WITHOUT the guard (fail open; " + unguarded.sum() + " unguarded so far): "
                        + e.getMessage());
        return IdempotencyAttempt.owned(Outcome.Status.UNGUARDED, new Unguarded<>());
    }

    private <T> T withRetries(String what, Supplier<T> call) {
        return withRetries(what, call, System.nanoTime());
    }

    /**
     * Calls the store, trying again after an {@link EngineUnavailableException}: {@code storeAttempts} times in all
     * (backoff 50 ms, doubling), and past that as long as {@code System.nanoTime()} is before {@code keepTryingUntil}
     * (then waiting at most 500 ms between tries, the last wait cut to end there).
     */
    private <T> T withRetries(String what, Supplier<T> call, long keepTryingUntil) {
        long backoff = 50;
        for (int attempt = 1; ; attempt++) {
            try {
                return call.get();
            } catch (EngineUnavailableException e) {
                long left = keepTryingUntil - System.nanoTime();
                if (attempt >= options.storeAttempts() && left <= 0) {
                    throw e;
                }
                long sleep = attempt < options.storeAttempts()
                        ? backoff
                        : Math.min(Math.min(backoff, 500), TimeUnit.NANOSECONDS.toMillis(left) + 1);
                try {
                    Thread.sleep(sleep);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                backoff *= 2;
            }
        }
    }

    private static String shortened(String fingerprint) {
        return fingerprint.length() > 15 ? fingerprint.substring(0, 15) + "..." : fingerprint;
    }

    /**
     * Stops the renewal thread if the guard has its own; a guard of a client is ended with the client. Then
     * new calls, and calls still waiting for another attempt, fail with {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (ownsRenewer) {
            renewer.shutdownNow();
        }
    }
}
