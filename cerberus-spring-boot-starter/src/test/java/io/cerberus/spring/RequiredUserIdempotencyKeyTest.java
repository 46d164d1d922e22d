package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** With {@code require-user}, a guarded request needs an authenticated user: anonymous ones never share one scope. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = IdempotencyKeyFilterTest.App.class,
        properties = {
            "cerberus.engines=mem:required-user",
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.paths=/orders/**",
            "cerberus.idempotency.http.require-user=true"
        })
class RequiredUserIdempotencyKeyTest {
    @LocalServerPort
    int port;

    @Autowired
    IdempotencyKeyFilterTest.Orders orders;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aGuardedRequestWithoutAUserIs401AndRunsNothingWhileAUsersRequestRuns() throws Exception {
        int before = orders.created.get();
        String key = UUID.randomUUID().toString();
        HttpResponse<String> anonymous = send(key, null);
        HttpResponse<String> ann = send(key, "ann");

        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.body()).contains("require-user");
        assertThat(ann.statusCode()).isEqualTo(201);
        assertThat(orders.created.get() - before).isEqualTo(1);
    }

    private HttpResponse<String> send(String key, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/1"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}"));
        if (user != null) {
            request.header(IdempotencyKeyFilterTest.TestUsers.HEADER, user);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
