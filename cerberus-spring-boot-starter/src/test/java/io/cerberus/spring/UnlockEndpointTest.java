package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.testkit.Poll;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The force-release endpoint of a running application, switched on and exposed: only a user who
 * logged in frees a hold, and only the hold with the token given; its holder learns it lost it.
 * (That it is off unless configured: {@link OptionalPartsTest}.)
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = UnlockEndpointTest.App.class,
        properties = {
            "cerberus.engines[0]=mem:unlock-endpoint",
            "management.endpoints.web.exposure.include=cerberus,cerberusunlock",
            "management.endpoint.cerberusunlock.access=unrestricted"
        })
class UnlockEndpointTest {
    private static final String USER = "X-Test-User";

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private final Cerberus holderProcess = Cerberus.connect("mem:unlock-endpoint");

    @AfterEach
    void close() {
        holderProcess.close();
    }

    @Test
    void aUserWhoLoggedInFreesTheHoldNamedByItsTokenAndTheHolderLearns() throws Exception {
        Lease stuck = holderProcess.lock("reports").acquire(Duration.ofSeconds(30));
        long token = stuck.fencingToken();

        HttpResponse<String> anonymous = unlock("reports", token, null);
        assertThat(anonymous.statusCode()).isEqualTo(403);
        assertThat(anonymous.body()).contains("no authenticated user");
        assertThat(stuck.isValid()).as("nothing freed without a user").isTrue();

        HttpResponse<String> wrongToken = unlock("reports", token + 1, "ops-alice");
        assertThat(wrongToken.statusCode()).isEqualTo(409);
        assertThat(json.readTree(wrongToken.body()).path("freed").asBoolean()).isFalse();
        assertThat(stuck.isValid()).isTrue();

        HttpResponse<String> freed = unlock("reports", token, "ops-alice");
        assertThat(freed.statusCode()).isEqualTo(200);
        JsonNode answer = json.readTree(freed.body());
        assertThat(answer.path("freed").asBoolean()).isTrue();
        assertThat(answer.path("fencingToken").asLong()).isEqualTo(token);
        Poll.until("the holder learns it lost the lock", Duration.ofSeconds(10), () -> !stuck.isValid());
        assertThat(unlock("reports", token, "ops-alice").statusCode())
                .as("freed once")
                .isEqualTo(409);
    }

    @Test
    void aBadNameIsABadRequest() throws Exception {
        HttpResponse<String> bad = unlock("x".repeat(600), 1, "ops-alice");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("lock name must be at most 512 characters");
    }

    private HttpResponse<String> unlock(String name, long token, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/actuator/cerberusunlock/"
                        + java.net.URLEncoder.encode(name, "UTF-8").replace("+", "%20")))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"fencingToken\":" + token + "}"));
        if (user != null) {
            request.header(USER, user);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Configuration
    @EnableAutoConfiguration
    static class App {
        /** Stands in for the application's security: a request naming a user is that user's. */
        @Bean
        FilterRegistrationBean<Filter> testLogin() {
            Filter login = (request, response, chain) -> {
                HttpServletRequest http = (HttpServletRequest) request;
                String user = http.getHeader(USER);
                chain.doFilter(
                        user == null
                                ? request
                                : new HttpServletRequestWrapper(http) {
                                    @Override
                                    public Principal getUserPrincipal() {
                                        return () -> user;
                                    }
                                },
                        response);
            };
            return new FilterRegistrationBean<>(login);
        }
    }
}
