package io.cerberus.spring;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyOptions;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/** The Idempotency-Key filter around a DeferredResult in MockMvc, as applications test it: {@code asyncDispatch}. */
class MockMvcAsyncIdempotencyKeyTest {
    /** A duplicate of a running request waits this briefly (30 s by default) before its 409. */
    private static final IdempotencyOptions DUPLICATES_WAIT_BRIEFLY =
            IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofMillis(300));

    private final Cerberus cerberus = Cerberus.connect("mem:mockmvc-async");
    private final Deferred controller = new Deferred();
    private final MockMvc mvc = MockMvcBuilders.standaloneSetup(controller)
            .addFilters(new IdempotencyKeyFilter(
                    () -> cerberus, () -> DUPLICATES_WAIT_BRIEFLY, new CerberusProperties.Http()))
            .build();
    private final String key = UUID.randomUUID().toString();

    @AfterEach
    void close() {
        cerberus.close();
    }

    @Test
    void theResponseOfTheAsyncDispatchIsStoredAndADuplicateMeanwhileIs409() throws Exception {
        MvcResult started =
                mvc.perform(order()).andExpect(request().asyncStarted()).andReturn();
        mvc.perform(order()).andExpect(status().isConflict());

        controller
                .pending
                .get()
                .setResult(ResponseEntity.status(201)
                        .header("Location", "/orders/m-1")
                        .body("order m-1"));
        mvc.perform(asyncDispatch(started))
                .andExpect(status().isCreated())
                .andExpect(content().string("order m-1"));

        mvc.perform(order())
                .andExpect(status().isCreated())
                .andExpect(content().string("order m-1"))
                .andExpect(header().string("Location", "/orders/m-1"))
                .andExpect(header().string("Idempotent-Replayed", "true"));
        org.assertj.core.api.Assertions.assertThat(controller.runs).hasValue(1);
    }

    private MockHttpServletRequestBuilder order() {
        return post("/orders")
                .header("Idempotency-Key", key)
                .contentType("application/json")
                .content("{}");
    }

    @RestController
    static class Deferred {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicReference<DeferredResult<ResponseEntity<String>>> pending = new AtomicReference<>();

        @PostMapping("/orders")
        DeferredResult<ResponseEntity<String>> order() {
            runs.incrementAndGet();
            DeferredResult<ResponseEntity<String>> result = new DeferredResult<>();
            pending.set(result);
            return result;
        }
    }
}
