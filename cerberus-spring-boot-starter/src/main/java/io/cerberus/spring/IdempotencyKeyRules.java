package io.cerberus.spring;

import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyKeyMismatchException;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.ReplayedFailureException;
import io.cerberus.idempotency.ResultNotKeptException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The decisions of the {@code Idempotency-Key} filters, apart from any transport: which requests
 * are guarded, the key of a request, which answer the filter gives of its own (as
 * {@code application/problem+json}), which responses are stored. The servlet
 * {@link IdempotencyKeyFilter} and the WebFlux {@link ReactiveIdempotencyKeyFilter} both ask here,
 * so they give the same answers for the same settings. Immutable, thread-safe.
 */
final class IdempotencyKeyRules {
    /** Statuses that say "try again": not stored, like 5xx, so a retry runs. */
    private static final Set<Integer> RETRYABLE = Set.of(408, 409, 425, 429);

    /** An answer of the filter's own. */
    record Problem(int status, String title, String detail) {
        /** @return the body, as {@code application/problem+json} */
        String json() {
            return "{\"type\":\"about:blank\",\"status\":" + status + ",\"title\":" + quoted(title) + ",\"detail\":"
                    + quoted(detail) + "}";
        }
    }

    private final CerberusProperties.Http settings;
    private final List<PathPattern> paths;
    private final Set<String> methods;

    /**
     * @param settings the {@code cerberus.idempotency.http.*} settings
     * @throws IllegalArgumentException if a setting is empty or out of range, or a path pattern does not parse
     */
    IdempotencyKeyRules(CerberusProperties.Http settings) {
        this.settings = check(settings);
        this.paths = settings.getPaths().stream()
                .map(PathPatternParser.defaultInstance::parse)
                .toList();
        this.methods = settings.getMethods().stream()
                .map(m -> m.toUpperCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
    }

    CerberusProperties.Http settings() {
        return settings;
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

    private static void require(boolean rule, String message) {
        if (!rule) {
            throw new IllegalArgumentException(message);
        }
    }

    /** @return whether a request of this method to this path (within the application) is guarded */
    boolean guards(String method, PathContainer path) {
        return methods.contains(method.toUpperCase(Locale.ROOT))
                && paths.stream().anyMatch(pattern -> pattern.matches(path));
    }

    /**
     * @param user the authenticated user's name, or null
     * @return {@code METHOD /path}, followed with per-user keys by {@code for user <hash>} (the
     *     SHA-256 of the principal name, so that user names do not go into the store); a name longer
     *     than an operation name may be ends with the SHA-256 of the whole ({@link OperationNames}),
     *     so two long paths are never one operation
     */
    String operation(String method, String uri, String user) {
        String operation = method + " " + uri;
        if (user != null && settings.isPerUser()) {
            operation += " for user " + OperationNames.sha256Hex(user).substring(0, 32);
        }
        return OperationNames.fit(operation);
    }

    /**
     * @param query the raw query string, or null
     * @return the key: the same key sent to {@code ?account=2} must not replay {@code ?account=1}
     * @throws IllegalArgumentException if the client's key cannot be a key
     */
    static IdempotencyKey key(String operation, String clientKey, byte[] body, String query) {
        return IdempotencyKey.of(operation, clientKey, query == null ? body : Map.of("body", body, "query", query));
    }

    /** @return 400: a guarded request without the header, when it is required */
    Problem missingKey() {
        return new Problem(
                400,
                "Idempotency-Key is missing",
                "this request needs a " + settings.getHeaderName()
                        + " header (a unique value, such as a UUID, that the client repeats when it retries)");
    }

    /** @return 401: a request with a key and without a user, when a user is required */
    Problem userRequired() {
        return new Problem(
                401,
                "Authentication required",
                "a request with a " + settings.getHeaderName()
                        + " header must come from an authenticated user here (cerberus.idempotency.http.require-user)");
    }

    /** @return 413: a body larger than the limit */
    Problem bodyTooLarge() {
        return new Problem(
                413,
                "Request body too large",
                "a request with a " + settings.getHeaderName() + " header may carry at most "
                        + settings.getMaxBodySize() + " here");
    }

    /** @return 400: a key that cannot be a key */
    static Problem malformed(IllegalArgumentException e) {
        return new Problem(400, "Idempotency-Key is malformed", e.getMessage());
    }

    /** @return 503: interrupted while claiming, nothing ran */
    static Problem interrupted() {
        return new Problem(503, "Interrupted", "the request was not run; retry later");
    }

    /**
     * @param failure what claiming the key threw
     * @return the answer to a claim that did not let the request run, or null for a failure that is not one
     *     (it goes on as it is)
     */
    Problem refused(RuntimeException failure) {
        if (failure instanceof IdempotencyKeyMismatchException) {
            return new Problem(
                    422,
                    "Idempotency-Key reused",
                    "this " + settings.getHeaderName()
                            + " was already used with another request body or query; a retry must send the same request, a new request a new key");
        }
        if (failure instanceof OperationInProgressException) {
            return new Problem(
                    409,
                    "Request in progress",
                    "a request with this " + settings.getHeaderName()
                            + " is still being processed; retry later to get its response");
        }
        if (failure instanceof ResultNotKeptException) {
            return new Problem(
                    422,
                    "Response not kept",
                    "the first request with this " + settings.getHeaderName()
                            + " was processed, but its response could not be kept to replay (" + failure.getMessage()
                            + "); it is not run again: send a new request with a new key");
        }
        if (failure instanceof ReplayedFailureException) {
            return new Problem(
                    500, "Request failed", "the first request with this " + settings.getHeaderName() + " failed");
        }
        if (failure instanceof IdempotencyStoreUnavailableException) {
            return new Problem(503, "Idempotency store unavailable", "the request was not run; retry later");
        }
        return null;
    }

    /** @return whether a response of this status is stored: not one that says "try again" */
    static boolean stored(int status) {
        return status < 500 && !RETRYABLE.contains(status);
    }

    /** @return the reason stored for a response larger than the stored size */
    String notKept() {
        return "its response was larger than the "
                + settings.getMaxStoredResponseSize().toBytes() + " bytes stored for replay";
    }

    /**
     * @param values the response's values of a header name
     * @return the stored headers of a response, in the configured order, repeated names kept
     */
    List<Map.Entry<String, String>> storedHeaders(Function<String, Collection<String>> values) {
        List<Map.Entry<String, String>> headers = new ArrayList<>();
        for (String name : settings.getStoredHeaders()) {
            for (String value : values.apply(name)) {
                headers.add(Map.entry(name, value));
            }
        }
        return headers;
    }

    private static String quoted(String text) {
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
}
