package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyOptions;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockAsyncContext;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * How an asynchronous request that the container ends on its own (no last dispatch through the
 * filter: a timeout, an error, {@code AsyncContext.complete()} from the application) settles its
 * Idempotency-Key: released, never left claimed until the lease runs out, nothing stored.
 */
class AsyncRequestEndTest {
    /** A duplicate of a running request waits this briefly (30 s by default) before its 409. */
    private static final IdempotencyOptions DUPLICATES_WAIT_BRIEFLY =
            IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofMillis(300));

    private final Cerberus cerberus = Cerberus.connect("mem:async-request-end");
    private final IdempotencyKeyFilter filter =
            new IdempotencyKeyFilter(() -> cerberus, () -> DUPLICATES_WAIT_BRIEFLY, http());
    private final String key = UUID.randomUUID().toString();
    private final AtomicInteger runs = new AtomicInteger();

    private static CerberusProperties.Http http() {
        CerberusProperties.Http http = new CerberusProperties.Http();
        http.setEnabled(true);
        return http;
    }

    @AfterEach
    void close() {
        cerberus.close();
    }

    @Test
    void aRequestCompletedWithoutALastDispatchReleasesItsKey() throws Exception {
        MockHttpServletRequest first = startAsync();
        assertThat(send(countingChain()).getStatus())
                .as("a duplicate while it is asynchronous")
                .isEqualTo(409);

        ((MockAsyncContext) first.getAsyncContext()).complete();

        MockHttpServletResponse retry = send(countingChain());
        assertThat(retry.getStatus()).isEqualTo(200);
        assertThat(retry.getHeader("Idempotent-Replayed")).isNull();
        assertThat(runs).hasValue(2);
    }

    @Test
    void aTimeoutReleasesTheKeyAtOnce() throws Exception {
        MockHttpServletRequest first = startAsync();
        MockAsyncContext async = (MockAsyncContext) first.getAsyncContext();
        for (AsyncListener listener : async.getListeners()) {
            listener.onTimeout(new AsyncEvent(async, first, async.getResponse()));
        }

        assertThat(send(countingChain()).getStatus()).isEqualTo(200);
        assertThat(runs).hasValue(2);
    }

    @Test
    void anErrorReleasesTheKeyAtOnce() throws Exception {
        MockHttpServletRequest first = startAsync();
        MockAsyncContext async = (MockAsyncContext) first.getAsyncContext();
        for (AsyncListener listener : async.getListeners()) {
            listener.onError(new AsyncEvent(async, first, async.getResponse(), new IOException("connection reset")));
        }

        assertThat(send(countingChain()).getStatus()).isEqualTo(200);
        assertThat(runs).hasValue(2);
    }

    /** @return the first request, left asynchronous by its application */
    private MockHttpServletRequest startAsync() throws Exception {
        MockHttpServletRequest request = request();
        filter.doFilter(request, new MockHttpServletResponse(), (req, res) -> {
            runs.incrementAndGet();
            req.startAsync(req, res);
        });
        assertThat(request.isAsyncStarted()).isTrue();
        return request;
    }

    private FilterChain countingChain() {
        return (req, res) -> {
            runs.incrementAndGet();
            res.getOutputStream().write("ran".getBytes(StandardCharsets.UTF_8));
        };
    }

    private MockHttpServletResponse send(FilterChain chain) throws Exception {
        MockHttpServletResponse response = new MockHttpServletResponse();
        filter.doFilter(request(), response, chain);
        return response;
    }

    private MockHttpServletRequest request() {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders/1");
        request.setAsyncSupported(true);
        request.addHeader("Idempotency-Key", key);
        request.setContentType("application/json");
        request.setContent("{}".getBytes(StandardCharsets.UTF_8));
        return request;
    }
}
