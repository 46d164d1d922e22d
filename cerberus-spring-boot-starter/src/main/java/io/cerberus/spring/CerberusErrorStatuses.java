package io.cerberus.spring;

import io.cerberus.EngineUnavailableException;
import io.cerberus.LockTimeoutException;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.OperationInProgressException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers Cerberus's exceptions with the HTTP status they mean instead of 500, as RFC 9457 problem
 * details: a lock still busy after its wait ({@link LockNotAcquiredException}, any
 * {@link LockTimeoutException}) and a duplicate whose first call still runs
 * ({@link OperationInProgressException}) are 409 Conflict, "try again"; an engine or idempotency
 * store that cannot be reached is 503 with {@code Retry-After}. The bodies name no lock, key or
 * engine (they go to clients); the 503 is logged with its cause.
 *
 * <p>The advice of lowest precedence, registered after the application's: a handler of the
 * application for these exceptions (in a controller or an advice) answers instead. Servlet and
 * WebFlux applications alike. Off with {@code cerberus.web.error-statuses.enabled=false}.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
class CerberusErrorStatuses {
    private static final Logger LOG = LoggerFactory.getLogger(CerberusErrorStatuses.class);

    private final String retryAfterSeconds;

    /** @param retryAfter the {@code Retry-After} of a 503, rounded up to whole seconds */
    CerberusErrorStatuses(Duration retryAfter) {
        if (retryAfter == null || retryAfter.isNegative()) {
            throw new IllegalArgumentException("cerberus.web.error-statuses.retry-after must be 0 or more");
        }
        long seconds = retryAfter.getSeconds() + (retryAfter.getNano() > 0 ? 1 : 0);
        this.retryAfterSeconds = Long.toString(seconds);
    }

    @ExceptionHandler(LockTimeoutException.class)
    ResponseEntity<ProblemDetail> lockBusy(LockTimeoutException e) {
        LOG.debug("answered 409: {}", e.getMessage());
        return answer(
                HttpStatus.CONFLICT,
                "Lock busy",
                "another request holds the lock this request needs; nothing was done, try again");
    }

    @ExceptionHandler(OperationInProgressException.class)
    ResponseEntity<ProblemDetail> inProgress(OperationInProgressException e) {
        LOG.debug("answered 409: {}", e.getMessage());
        return answer(
                HttpStatus.CONFLICT,
                "Request in progress",
                "the same operation is still being processed; try again to get its result");
    }

    @ExceptionHandler({EngineUnavailableException.class, IdempotencyStoreUnavailableException.class})
    ResponseEntity<ProblemDetail> unavailable(RuntimeException e) {
        LOG.warn("answered 503: {}", e.getMessage()); // once per request while it lasts: the trace only at DEBUG
        LOG.debug("the 503's exception", e);
        ResponseEntity<ProblemDetail> answer = answer(
                HttpStatus.SERVICE_UNAVAILABLE,
                "Lock engine unavailable",
                "the store that coordinates this service cannot be reached; try again later");
        return ResponseEntity.status(answer.getStatusCode())
                .header(HttpHeaders.RETRY_AFTER, retryAfterSeconds)
                .body(answer.getBody());
    }

    private static ResponseEntity<ProblemDetail> answer(HttpStatus status, String title, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setTitle(title);
        return ResponseEntity.status(status).body(problem);
    }
}
