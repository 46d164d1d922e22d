package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.Timeouts;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A guarded response far larger than the heap of the application that sends it: the filter keeps
 * at most {@code max-stored-response-size} of it, and the client gets every byte.
 */
class LargeResponseFilterTest {
    private static final int MEGABYTES = 200;

    @Test
    void aResponseOf200MegabytesPassesTheFilterInAJvmOf128() throws Exception {
        try (ManagedProcess app = ManagedProcess.start(
                "large-response-app",
                JavaCommand.of(LargeResponseApp.class)
                        .quickStart("128m")
                        .timeScale()
                        .toList())) {
            String port = app.awaitLine("PORT ", Timeouts.scaled(Duration.ofSeconds(60)))
                    .substring("PORT ".length());
            HttpClient http = HttpClient.newHttpClient();
            String key = UUID.randomUUID().toString();
            HttpRequest export = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/export?megabytes=" + MEGABYTES))
                    .header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.noBody())
                    .build();

            HttpResponse<InputStream> response = http.send(export, HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            long offset = 0;
            long wrong = 0;
            try (InputStream body = response.body()) {
                byte[] buffer = new byte[LargeResponseApp.CHUNK];
                for (int n; (n = body.read(buffer)) >= 0; offset += n) {
                    for (int i = 0; i < n; i++) {
                        if (buffer[i] != LargeResponseApp.pattern(offset + i)) {
                            wrong++;
                        }
                    }
                }
            }
            assertThat(offset).as("every byte arrived").isEqualTo((long) MEGABYTES << 20);
            assertThat(wrong)
                    .as("bytes that differ from what the application wrote")
                    .isZero();

            HttpResponse<String> duplicate = http.send(export, HttpResponse.BodyHandlers.ofString());
            assertThat(duplicate.statusCode())
                    .as("ran, response not kept: the duplicate does not run again")
                    .isEqualTo(422);
            assertThat(app.isAlive()).isTrue();
            assertThat(app.stderr()).doesNotContain("OutOfMemoryError");
        }
    }
}
