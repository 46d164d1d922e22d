package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyKeyMismatchException;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.ReplayedFailureException;
import io.cerberus.idempotency.ResultNotKeptException;
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
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Runs a request that carries an {@code Idempotency-Key} header once per key, as the IETF draft
 * {@code draft-ietf-httpapi-idempotency-key-header} describes: the first request runs and its
 * response (status, selected headers, body) is stored; a duplicate (same key, same method and
 * path, same body) gets that response replayed, marked with a replay header, without running
 * anything. The key is {@code IdempotencyKey.of(method + " " + path, header, body and query)}, so
 * the same key with another body or query string is a mismatch; with {@code per-user} (the
 * default), the operation also names the authenticated user, so two users' equal keys never meet;
 * with {@code require-user}, a request without one is refused (401). A response body larger than
 * {@code max-stored-response-size} is sent but not stored: the key is remembered as "ran, response
 * not kept", and a duplicate gets 422.
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
 * ({@link GuardedExchange}). Thread-safe.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final Supplier<Cerberus> cerberus;
    private final Supplier<IdempotencyOptions> options;
    private final CerberusProperties.Http settings;
    private final List<PathPattern> paths;
    private final Set<String> methods;

    /**
     * @param cerberus the client whose first engine keeps the records (they stay there across switches)
     * @param options the guard's options
     * @param settings the {@code cerberus.idempotency.http.*} settings
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     */
    public IdempotencyKeyFilter(
            Supplier<Cerberus> cerberus, Supplier<IdempotencyOptions> options, CerberusProperties.Http settings) {
        this.cerberus = cerberus;
        this.options = options;
        this.settings = check(settings);
        this.paths = settings.getPaths().stream()
                .map(PathPatternParser.defaultInstance::parse)
                .toList();
        this.methods = settings.getMethods().stream()
                .map(m -> m.toUpperCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
    }

    private static CerberusProperties.Http check(CerberusProperties.Http settings) {
        require(
                settings.getHeaderName() != null && !settings.getHeaderName().isBlank(),
                "cerberus.idempotency.http.header-name must not be empty");
        require(
                settings.getReplayHeader() != null
                        && !settings.getReplayHeader().isBlank(),
                "cerberus.idempotency.http.replay-header must not be empty");
        require(
                settings.getPaths() != null && !settings.getPaths().isEmpty(),
                "cerberus.idempotency.http.paths must name at least one path pattern");
        require(
                settings.getMethods() != null && !settings.getMethods().isEmpty(),
                "cerberus.idempotency.http.methods must name at least one method");
        require(
                settings.getRetention() != null && settings.getRetention().compareTo(Duration.ofSeconds(1)) >= 0,
                "cerberus.idempotency.http.retention must be at least 1s, was " + settings.getRetention());
        require(
                settings.getMaxBodySize() != null
                        && settings.getMaxBodySize().toBytes() > 0
                        && settings.getMaxBodySize().toBytes() <= Integer.MAX_VALUE - 8,
                "cerberus.idempotency.http.max-body-size must be 1B to 2GB, was " + settings.getMaxBodySize());
        require(settings.getStoredHeaders() != null, "cerberus.idempotency.http.stored-headers must not be null");
        require(
                settings.getMaxStoredResponseSize() != null
                        && settings.getMaxStoredResponseSize().toBytes() >= 0
                        && settings.getMaxStoredResponseSize().toBytes() <= Integer.MAX_VALUE - 8,
                "cerberus.idempotency.http.max-stored-response-size must be 0B to 2GB, was "
                        + settings.getMaxStoredResponseSize());
        return settings;
    }

    /**
     * @return {@code METHOD /path}, followed with per-user keys by {@code for user <hash>} (the
     *     SHA-256 of the principal name, so that user names do not go into the store); a name longer
     *     than an operation name may be ends with the SHA-256 of the whole ({@link OperationNames}),
     *     so two long paths are never one operation
     */
    private String operation(HttpServletRequest request) {
        String operation = request.getMethod() + " " + request.getRequestURI();
        Principal user = settings.isPerUser() ? request.getUserPrincipal() : null;
        if (user != null) {
            operation += " for user " + OperationNames.sha256Hex(user.getName()).substring(0, 32);
        }
        return OperationNames.fit(operation);
    }

    private static void require(boolean rule, String message) {
        if (!rule) {
            throw new IllegalArgumentException(message);
        }
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        if (GuardedExchange.of(request) != null) {
            return false;
        }
        if (!methods.contains(request.getMethod().toUpperCase(Locale.ROOT))) {
            return true;
        }
        var path = ServletRequestPathUtils.parseAndCache(request).pathWithinApplication();
        return paths.stream().noneMatch(pattern -> pattern.matches(path));
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
                problem(
                        response,
                        400,
                        "Idempotency-Key is missing",
                        "this request needs a " + settings.getHeaderName()
                                + " header (a unique value, such as a UUID, that the client repeats when it retries)");
            } else {
                chain.doFilter(request, response);
            }
            return;
        }
        if (settings.isRequireUser() && request.getUserPrincipal() == null) {
            problem(
                    response,
                    401,
                    "Authentication required",
                    "a request with a " + settings.getHeaderName()
                            + " header must come from an authenticated user here (cerberus.idempotency.http.require-user)");
            return;
        }
        byte[] body = readBody(request);
        if (body == null) {
            problem(
                    response,
                    413,
                    "Request body too large",
                    "a request with a " + settings.getHeaderName() + " header may carry at most "
                            + settings.getMaxBodySize() + " here");
            return;
        }
        String operation = operation(request);
        IdempotencyKey key;
        try {
            // the query string is part of the request: the same key sent to ?account=2 must not replay ?account=1
            String query = request.getQueryString();
            key = IdempotencyKey.of(operation, clientKey, query == null ? body : Map.of("body", body, "query", query));
        } catch (IllegalArgumentException e) {
            problem(response, 400, "Idempotency-Key is malformed", e.getMessage());
            return;
        }
        IdempotencyAttempt<StoredResponse> attempt;
        try {
            attempt =
                    cerberus.get().idempotency(options.get()).begin(key, settings.getRetention(), StoredResponse.CODEC);
        } catch (IdempotencyKeyMismatchException e) {
            problem(
                    response,
                    422,
                    "Idempotency-Key reused",
                    "this " + settings.getHeaderName()
                            + " was already used with another request body or query; a retry must send the same request, a new request a new key");
            return;
        } catch (OperationInProgressException e) {
            problem(
                    response,
                    409,
                    "Request in progress",
                    "a request with this " + settings.getHeaderName()
                            + " is still being processed; retry later to get its response");
            return;
        } catch (ResultNotKeptException e) {
            problem(
                    response,
                    422,
                    "Response not kept",
                    "the first request with this " + settings.getHeaderName()
                            + " was processed, but its response could not be kept to replay (" + e.getMessage()
                            + "); it is not run again: send a new request with a new key");
            return;
        } catch (ReplayedFailureException e) {
            problem(
                    response,
                    500,
                    "Request failed",
                    "the first request with this " + settings.getHeaderName() + " failed");
            return;
        } catch (IdempotencyStoreUnavailableException e) {
            LOG.warn("idempotency store unavailable for {}: {}", operation, e.getMessage());
            problem(response, 503, "Idempotency store unavailable", "the request was not run; retry later");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem(response, 503, "Interrupted", "the request was not run; retry later");
            return;
        }
        if (!attempt.mustRun()) {
            replay(attempt.replayed(), response);
            return;
        }
        GuardedExchange.start(
                attempt,
                new CachedBodyRequest(request, body),
                response,
                chain,
                settings.getStoredHeaders(),
                settings.getMaxStoredResponseSize().toBytes());
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

    private static void problem(HttpServletResponse response, int status, String title, String detail)
            throws IOException {
        response.setStatus(status);
        response.setContentType("application/problem+json");
        response.setCharacterEncoding("UTF-8");
        response.getWriter()
                .write("{\"type\":\"about:blank\",\"status\":" + status + ",\"title\":" + json(title) + ",\"detail\":"
                        + json(detail) + "}");
    }

    private static String json(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
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
