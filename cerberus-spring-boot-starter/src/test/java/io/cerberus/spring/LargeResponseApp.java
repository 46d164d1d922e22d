package io.cerberus.spring;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A servlet application, run in a child JVM with a small heap by {@link LargeResponseFilterTest}:
 * {@code POST /export?megabytes=N} answers N MiB of {@link #pattern} through the Idempotency-Key
 * filter. Prints {@code PORT n} once it listens.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import(LargeResponseApp.Export.class)
public class LargeResponseApp {
    static final int CHUNK = 64 * 1024;

    /** @return the byte at this offset of every export */
    static byte pattern(long offset) {
        return (byte) ('a' + offset % 26);
    }

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(
                LargeResponseApp.class,
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--cerberus.engines=mem:large-response",
                "--cerberus.idempotency.http.enabled=true",
                "--cerberus.idempotency.http.max-stored-response-size=1MB",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN");
        System.out.println("PORT " + context.getEnvironment().getProperty("local.server.port"));
        System.out.flush();
    }

    @RestController
    static class Export {
        @PostMapping("/export")
        void export(@RequestParam int megabytes, HttpServletResponse response) throws IOException {
            response.setContentType("application/octet-stream");
            long total = (long) megabytes << 20;
            byte[] chunk = new byte[CHUNK];
            OutputStream out = response.getOutputStream();
            for (long offset = 0; offset < total; offset += CHUNK) {
                for (int i = 0; i < CHUNK; i++) {
                    chunk[i] = pattern(offset + i);
                }
                out.write(chunk);
            }
        }
    }
}
