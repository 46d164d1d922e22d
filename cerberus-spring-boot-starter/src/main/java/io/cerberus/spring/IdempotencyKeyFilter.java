package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Runs a request that carries an {@code Idempotency-Key} header once per key, as the IETF draft
 * {@code draft-ietf-httpapi-idempotency-key-header} describes: the first request runs and its
 * response (status, selected headers, body) is stored; a duplicate (same key, same method and
 * path, same body) gets that response replayed, marked with a replay header, without running
 * anything. The key is {@code IdempotencyKey.of(method + " " + path, header, body and query)}, so
 * the same key with another body or query string is a mismatch; with {@code per-user} (the
 * default), the operation also names the authenticated user, so two users' equal keys never meet;
 * with {@code require-user}, a request without one is refused (401). A response body larger than
 * {@code max-stored-response-size} is sent, remembered as "ran, response not kept" (a duplicate gets 422).
 *
 * <p>Answers of its own, as {@code application/problem+json}: 400 when the header is required and
 * missing (or malformed), 409 while the first request still runs, 422 when the key comes with
 * another body, 413 when the body is larger than the configured limit, 503 when the idempotency
 * store cannot be reached (and the guard fails closed).
 *
 * <p>A response of status 500 or more, or 408, 409, 425, 429 (which say "try again"), is not
 * stored: the key is released and a retry runs again. An asynchronous request (DeferredResult,
 * Callable, CompletableFuture...) keeps its key claimed until its last dispatch, whose response
 * is stored by the same rules; its timeout or error releases the key; a streamed response (SSE,
 * ResponseBodyEmitter, StreamingResponseBody) goes to the client as written and is never stored
 * ({@link GuardedExchange}). With {@code transaction}, a request runs in a transaction of the records' DataSource
 * and its response is stored in it ({@link RequestTransactions}). Rules shared with the WebFlux filter:
 * {@link IdempotencyKeyRules}. Thread-safe.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final Supplier<Cerberus> cerberus;
    private final Supplier<IdempotencyOptions> options;
    private final IdempotencyKeyRules rules;
    private final CerberusProperties.Http settings;
    private final RequestTransactions transactions;

    /**
     * A filter that stores each response after its request ran, apart from the request's transactions.
     *
     * @param cerberus the client whose first engine keeps the records (they stay there across switches)
     * @param options the guard's options
     * @param settings the {@code cerberus.idempotency.http.*} settings
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     */
    public IdempotencyKeyFilter(
            Supplier<Cerberus> cerberus, Supplier<IdempotencyOptions> options, CerberusProperties.Http settings) {
        this(cerberus, options, settings, null);
    }

    /**
     * @param transactions where each guarded request's transaction is begun, the response written in it before it
     *     commits ({@code cerberus.idempotency.http.transaction}); null for none
     */
    IdempotencyKeyFilter(
            Supplier<Cerberus> cerberus,
            Supplier<IdempotencyOptions> options,
            CerberusProperties.Http settings,
            RequestTransactions transactions) {
        this.cerberus = cerberus;
        this.options = options;
        this.rules = new IdempotencyKeyRules(settings);
        this.settings = settings;
        this.transactions = transactions;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        if (GuardedExchange.of(request) != null) {
            return false;
        }
        return !rules.guards(
                request.getMethod(),
                ServletRequestPathUtils.parseAndCache(request).pathWithinApplication());
    }

    /** @return false: the ASYNC dispatch of a guarded request writes the response that is stored */
    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        GuardedExchange exchange = GuardedExchange.of(request);
        if (exchange != null) {
            exchange.redispatch(request, response, chain);
            return;
        }
        if (isAsyncDispatch(request)) {
            // the first dispatch was not guarded (no key, or answered by this filter): nothing to do now
            chain.doFilter(request, response);
            return;
        }
        String clientKey = request.getHeader(settings.getHeaderName());
        if (clientKey == null) {
            if (settings.isRequired()) {
                problem(response, rules.missingKey());
            } else {
                chain.doFilter(request, response);
            }
            return;
        }
        Principal user = request.getUserPrincipal();
        if (settings.isRequireUser() && user == null) {
            problem(response, rules.userRequired());
            return;
        }
        byte[] body = readBody(request);
        if (body == null) {
            problem(response, rules.bodyTooLarge());
            return;
        }
        String operation =
                rules.operation(request.getMethod(), request.getRequestURI(), user == null ? null : user.getName());
        IdempotencyKey key;
        try {
            key = IdempotencyKeyRules.key(operation, clientKey, body, request.getQueryString());
        } catch (IllegalArgumentException e) {
            problem(response, IdempotencyKeyRules.malformed(e));
            return;
        }
        IdempotencyAttempt<StoredResponse> attempt;
        try {
            attempt =
                    cerberus.get().idempotency(options.get()).begin(key, settings.getRetention(), StoredResponse.CODEC);
        } catch (RuntimeException e) {
            IdempotencyKeyRules.Problem refused = rules.refused(e);
            if (refused == null) {
                throw e;
            }
            if (e instanceof IdempotencyStoreUnavailableException) {
                LOG.warn("idempotency store unavailable for {}: {}", operation, e.getMessage());
            }
            problem(response, refused);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem(response, IdempotencyKeyRules.interrupted());
            return;
        }
        if (!attempt.mustRun()) {
            replay(attempt.replayed(), response);
            return;
        }
        GuardedExchange.start(attempt, new CachedBodyRequest(request, body), response, chain, rules, transactions);
    }

    private void replay(StoredResponse stored, HttpServletResponse response) throws IOException {
        response.setStatus(stored.status());
        for (Map.Entry<String, String> header : stored.headers()) {
            response.addHeader(header.getKey(), header.getValue());
        }
        response.setHeader(settings.getReplayHeader(), "true");
        response.setContentLength(stored.body().length);
        response.getOutputStream().write(stored.body());
    }

    /** @return the whole body, or null if it is larger than the limit */
    private byte[] readBody(HttpServletRequest request) throws IOException {
        long limit = settings.getMaxBodySize().toBytes();
        if (request.getContentLengthLong() > limit) {
            return null;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (InputStream in = request.getInputStream()) {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (bytes.size() + n > limit) {
                    return null;
                }
                bytes.write(buffer, 0, n);
            }
        }
        return bytes.toByteArray();
    }

    /** Writes an answer of a filter's own (this one's, {@link FenceCheckFilter}'s) as {@code application/problem+json}. */
    static void problem(HttpServletResponse response, IdempotencyKeyRules.Problem problem) throws IOException {
        response.setStatus(problem.status());
        response.setContentType("application/problem+json");
        response.setCharacterEncoding("UTF-8");
        response.getWriter().write(problem.json());
    }

    /** The request with its body already read: the application reads it again from memory. */
    private static final class CachedBodyRequest extends HttpServletRequestWrapper {
        private final byte[] body;

        CachedBodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }

                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException(
                            "the body was already read by the Idempotency-Key filter; read it blocking");
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            Charset charset =
                    getCharacterEncoding() == null ? StandardCharsets.UTF_8 : Charset.forName(getCharacterEncoding());
            return new BufferedReader(new InputStreamReader(getInputStream(), charset));
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
