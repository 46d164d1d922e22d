package io.cerberus.spring;

import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.Outcome;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.ShallowEtagHeaderFilter;
import org.springframework.web.util.WebUtils;

/**
 * One request that {@link IdempotencyKeyFilter} runs under a claimed key, from its first dispatch to its
 * last (an asynchronous one has a first dispatch that starts the work and ASYNC dispatches that write
 * the response). The exchange lives in a request attribute in between.
 *
 * <p>Invariants: the attempt stays open (key claimed, lease renewed by the guard) until the request
 * ends or its response passes the stored size; it is settled exactly once (an atomic flag: container
 * callbacks run on other threads), before the first byte of the body goes to the client, so a retry
 * sent the moment the client reads the response finds the key stored or free, never in progress.
 * At most {@code max-stored-response-size} bytes are held in memory ({@link ResponseRecorder}). How:
 * <ul>
 * <li>the last dispatch (after which the request is no longer asynchronous) stores the response by
 *     the status rules, or releases the key;
 * <li>a body that passes the stored size settles the key then, by the same rules ("ran, response
 *     not kept", or released), and streams on to the client in bounded memory;
 * <li>an async timeout or error releases the key at once; the timeout result is not stored;
 * <li>a response that Spring streams (StreamingResponseBody, ResponseBodyEmitter, SSE: marked with
 *     {@link ShallowEtagHeaderFilter#disableContentCaching}) cannot be replayed: it is not stored and
 *     the key is released when the request ends (logged);
 * <li>an {@link AsyncListener} is the safety net: a request the container ends without a last
 *     dispatch through the filter releases its key on {@code onComplete};
 * <li>a first dispatch run in a transaction ends it before it returns: a stored response commits in it;
 *     any other outcome rolls it back and releases the key.
 * </ul>
 */
final class GuardedExchange implements AsyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);
    private static final String ATTRIBUTE = GuardedExchange.class.getName();

    private final IdempotencyAttempt<StoredResponse> attempt;
    private final ResponseRecorder recorder;
    private final IdempotencyKeyRules rules;
    private final long maxStored;
    private final String request;
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile AsyncContext listenedTo;
    /** The first dispatch's transaction ({@link RequestTransactions}), until it ends; null without one. */
    private RequestTransactions.Open transaction;

    private GuardedExchange(
            IdempotencyAttempt<StoredResponse> attempt,
            HttpServletRequest request,
            HttpServletResponse response,
            IdempotencyKeyRules rules) {
        this.attempt = attempt;
        this.rules = rules;
        this.maxStored = rules.settings().getMaxStoredResponseSize().toBytes();
        this.request = request.getMethod() + " " + request.getRequestURI();
        this.recorder = new ResponseRecorder(response, request, maxStored, this::passedLimit);
    }

    /** @return the exchange of a request whose first dispatch the filter guarded, or null */
    static GuardedExchange of(ServletRequest request) {
        return request.getAttribute(ATTRIBUTE) instanceof GuardedExchange exchange ? exchange : null;
    }

    /**
     * Runs the first dispatch of a request whose attempt must run.
     *
     * @param rules which headers are stored, the largest body stored (a larger one is remembered as not kept)
     * @param transactions where the first dispatch's transaction is begun, or null to run it without one
     */
    static void start(
            IdempotencyAttempt<StoredResponse> attempt,
            HttpServletRequest request,
            HttpServletResponse response,
            FilterChain chain,
            IdempotencyKeyRules rules,
            RequestTransactions transactions)
            throws IOException, ServletException {
        GuardedExchange exchange = new GuardedExchange(attempt, request, response, rules);
        if (transactions != null && attempt.status() == Outcome.Status.EXECUTED) {
            try {
                exchange.transaction = transactions.begin("Idempotency-Key " + exchange.request);
            } catch (RuntimeException e) {
                attempt.close(); // nothing ran: the key is free for a retry
                throw e;
            }
        }
        request.setAttribute(ATTRIBUTE, exchange);
        exchange.dispatch(request, exchange.recorder, chain);
    }

    /** Runs a later (ASYNC) dispatch: what it writes goes to the same recorder. */
    void redispatch(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        // The container hands back the response given to startAsync, which wraps the recorder; a container
        // that hands back the bare response gets the recorder, so the body is recorded either way.
        boolean wrapsRecorder = WebUtils.getNativeResponse(response, ResponseRecorder.class) == recorder;
        dispatch(request, wrapsRecorder ? response : recorder, chain);
    }

    private void dispatch(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        try {
            chain.doFilter(request, response);
        } catch (IOException | ServletException | RuntimeException | Error e) {
            request.removeAttribute(ATTRIBUTE);
            RequestTransactions.Open failed = transaction;
            transaction = null;
            if (failed != null) {
                try {
                    failed.rollback();
                } catch (RuntimeException rollback) {
                    e.addSuppressed(rollback);
                }
            }
            if (settled.compareAndSet(false, true)) {
                attempt.fail(e);
            } else if (failed != null) {
                attempt.rolledBack(); // settled in the transaction rolled back (a body past the stored size)
            }
            throw e;
        }
        if (transaction != null && request.isAsyncStarted()) {
            // the work goes on on other threads, outside this thread's transaction: the first dispatch's part ends
            // now, and the response is stored when the request ends, as without a transaction
            RequestTransactions.Open first = transaction;
            transaction = null;
            end(first, !first.rollbackOnly());
        }
        if (request.isAsyncStarted()) {
            AsyncContext async = request.getAsyncContext();
            if (async != listenedTo) {
                listenedTo = async;
                async.addListener(this);
            }
            return;
        }
        request.removeAttribute(ATTRIBUTE);
        finish();
    }

    /** The last dispatch: store the response or release the key, then let the body go to the client. */
    private void finish() throws IOException {
        RequestTransactions.Open open = transaction;
        transaction = null;
        try {
            if (open != null) {
                finishIn(open);
                return;
            }
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            if (recorder.streamed()) {
                LOG.warn(
                        "{} streamed its response (StreamingResponseBody, ResponseBodyEmitter or SSE): a streamed response cannot be"
                                + " replayed, so it was not stored and its Idempotency-Key was released; leave such paths out of"
                                + " cerberus.idempotency.http.paths",
                        request);
            } else {
                int status = recorder.getStatus();
                if (IdempotencyKeyRules.stored(status)) {
                    attempt.complete(new StoredResponse(status, storedHeaders(), recorder.body()));
                }
            }
            attempt.close();
        } finally {
            recorder.sendKept(true);
        }
    }

    /**
     * The last dispatch of a request run in a transaction: a response that is stored is written in it and commits
     * with the request's effects; any other (a status that is not stored, a transaction marked rollback-only, whose
     * key is released) rolls them back, so that a retry runs on what was there before. A stored response whose
     * transaction does not commit is replaced by a 500: the client must not believe it. A streamed response went to
     * the client as written: its effects commit, and its key is released, as without a transaction.
     */
    private void finishIn(RequestTransactions.Open open) throws IOException {
        int status = recorder.getStatus();
        if (recorder.streamed() && settled.compareAndSet(false, true)) {
            end(open, !open.rollbackOnly());
            attempt.close();
            LOG.warn(
                    "{} streamed its response (StreamingResponseBody, ResponseBodyEmitter or SSE): a streamed response cannot be"
                            + " replayed, so it was not stored and its Idempotency-Key was released; leave such paths out of"
                            + " cerberus.idempotency.http.paths",
                    request);
            return;
        }
        boolean storable = IdempotencyKeyRules.stored(status);
        if (!settled.compareAndSet(false, true)) {
            // settled when the body passed the stored size, and already going to the client
            if (!end(open, storable && !open.rollbackOnly())) {
                attempt.rolledBack(); // its record, if written in the transaction, went with it
            }
            return;
        }
        if (!storable || open.rollbackOnly()) {
            boolean rolledBackByTheApplication = storable;
            end(open, false);
            attempt.close();
            if (rolledBackByTheApplication && status < 400) {
                notCommitted("its transaction was marked rollback-only, so it was rolled back", null);
            }
            return;
        }
        if (!open.joinable()) {
            LOG.warn(
                    "{}: the transaction manager does not manage the DataSource of the idempotency records, so the response"
                            + " is stored after the commit",
                    request);
            open.commit();
            attempt.complete(new StoredResponse(status, storedHeaders(), recorder.body()));
            return;
        }
        try {
            attempt.completeIn(open.connection(), new StoredResponse(status, storedHeaders(), recorder.body()));
        } catch (java.sql.SQLException | RuntimeException e) {
            end(open, false);
            attempt.rolledBack();
            notCommitted("its response could not be stored in its transaction", e);
            return;
        }
        try {
            open.commit();
        } catch (RuntimeException e) {
            attempt.rolledBack(); // frees the key unless the commit did go through: safe in doubt
            notCommitted("its transaction's commit failed, so whether it took effect is unknown", e);
        }
    }

    /**
     * Commits or rolls back; a failure is logged, as the response can no longer tell it.
     *
     * @return whether it committed
     */
    private boolean end(RequestTransactions.Open open, boolean commit) {
        try {
            if (commit) {
                open.commit();
            } else {
                open.rollback();
            }
            return commit;
        } catch (RuntimeException e) {
            LOG.error("{}: its transaction failed to {}", request, commit ? "commit" : "roll back", e);
            return false;
        }
    }

    /**
     * Answers 500 instead of the kept response, whose effects did not commit (or may not have): a retry with the
     * same key runs again, or gets the stored response if the commit did go through.
     */
    private void notCommitted(String why, Exception cause) throws IOException {
        LOG.error("{}: {}; the client gets 500, and a retry with its Idempotency-Key runs again", request, why, cause);
        if (!recorder.discardKept()) {
            return; // already gone out
        }
        IdempotencyKeyFilter.problem(
                (HttpServletResponse) recorder.getResponse(),
                new IdempotencyKeyRules.Problem(
                        500, "Not committed", "the request ran, but " + why + "; retry with the same Idempotency-Key"));
    }

    /**
     * The body passes the stored size: settle now, before its first byte goes to the client. A
     * failure to record the settlement is logged, and the response still goes out: the operation ran.
     */
    private void passedLimit(int status) {
        if (!settled.compareAndSet(false, true)) {
            return;
        }
        try {
            if (IdempotencyKeyRules.stored(status)) {
                LOG.warn(
                        "{} answered {} with more than cerberus.idempotency.http.max-stored-response-size ({} bytes): sent as"
                                + " written and not stored; a duplicate gets 422",
                        request,
                        status,
                        maxStored);
                if (transaction != null && transaction.joinable()) {
                    attempt.completeNotKeptIn(transaction.connection(), rules.notKept()); // commits with the request
                } else {
                    attempt.completeNotKept(rules.notKept());
                }
            }
            attempt.close();
        } catch (java.sql.SQLException | RuntimeException e) {
            LOG.error(
                    "{} answered {} with more than {} bytes, but the idempotency store could not record that its response is"
                            + " not kept: until the key's lease runs out a duplicate gets 409, then it runs again",
                    request,
                    status,
                    maxStored,
                    e);
        }
    }

    private List<Map.Entry<String, String>> storedHeaders() {
        return rules.storedHeaders(name -> "Content-Type".equalsIgnoreCase(name) && recorder.getContentType() != null
                ? List.of(recorder.getContentType())
                : recorder.getHeaders(name));
    }

    private void release(String why) {
        if (settled.compareAndSet(false, true)) {
            LOG.debug("{} {}: its response is not stored, its Idempotency-Key is released", request, why);
            attempt.close();
        }
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        release("timed out while asynchronous");
    }

    @Override
    public void onError(AsyncEvent event) {
        release("failed while asynchronous (" + event.getThrowable() + ")");
    }

    @Override
    public void onComplete(AsyncEvent event) {
        if (!settled.get()) {
            LOG.warn(
                    "{} ended without a last dispatch through the Idempotency-Key filter; its response is not stored,"
                            + " its key is released",
                    request);
            release("ended");
        }
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // A container clears the listeners when a later dispatch starts async processing again.
        listenedTo = event.getAsyncContext();
        listenedTo.addListener(this);
    }
}
