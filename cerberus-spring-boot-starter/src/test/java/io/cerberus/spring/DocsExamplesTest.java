package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.JavaSources;
import io.cerberus.testkit.ReadmeExamples;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every Java example of the Spring, leadership and fencing pages compiles, as a reader copies it: each block
 * goes into a frame that imports what an application imports and declares the names the page leaves
 * to the reader ({@code invoices}, {@code reminders}, {@code Booking}...), which a block may declare
 * again (it is a class inside the frame). A block of declarations
 * (annotated methods, records, classes) is the frame's body, its {@code { ... }} bodies made to
 * throw; any other block is the body of a method.
 */
class DocsExamplesTest {
    private static final Pattern DECLARATIONS =
            Pattern.compile("^(@|public |record |class |interface )", Pattern.MULTILINE);

    @ParameterizedTest
    @ValueSource(strings = {"docs/SPRING.md", "docs/SPRING-WEB.md", "docs/LEADERSHIP.md", "docs/FENCING.md"})
    void everyJavaExampleCompiles(String page) throws Exception {
        Path tree = ReadmeExamples.readme().orElseThrow().getParent();
        List<String> blocks = JavaSources.javaBlocks(Files.readString(tree.resolve(page))).stream()
                .filter(block -> !block.startsWith("package ")) // whole files: the quick start's (QuickStartDocTest)
                .toList();
        assertThat(blocks).as("Java examples in " + page).isNotEmpty();
        for (int i = 0; i < blocks.size(); i++) {
            String name = "Example" + i;
            JavaSources.compile("docs." + name, frame(name, blocks.get(i)), "example " + (i + 1) + " of " + page);
        }
    }

    private static String frame(String name, String block) {
        boolean declarations = DECLARATIONS.matcher(block.strip()).lookingAt();
        String body = declarations
                ? block.replace("{ ... }", "{ throw new UnsupportedOperationException(); }")
                : "void example() throws Exception {\n" + block + "\n}";
        return """
                package docs;

                import io.cerberus.Cerberus;
                import io.cerberus.Fence;
                import io.cerberus.Lease;
                import io.cerberus.Leadership;
                import io.cerberus.LeadershipListener;
                import io.cerberus.LockInfo;
                import io.cerberus.fencing.FenceKeeper;
                import io.cerberus.fencing.FencedFile;
                import io.cerberus.fencing.FencedRows;
                import io.cerberus.fencing.StaleFenceException;
                import io.cerberus.idempotency.OperationInProgressException;
                import io.cerberus.redis.FencedRedis;
                import io.cerberus.spring.WithDistributedLock;
                import io.cerberus.spring.ExclusiveRun;
                import io.cerberus.spring.FenceCheckFilter;
                import io.cerberus.spring.FencedCalls;
                import io.cerberus.spring.FencingRequestInterceptor;
                import io.cerberus.spring.FencedRowsTemplate;
                import io.cerberus.spring.Idempotent;
                import io.cerberus.spring.LeaderWork;
                import io.cerberus.spring.LockNotAcquiredException;
                import io.lettuce.core.RedisClient;
                import io.lettuce.core.api.StatefulRedisConnection;
                import java.nio.file.Path;
                import java.sql.Connection;
                import java.time.Duration;
                import java.util.concurrent.CompletableFuture;
                import javax.sql.DataSource;
                import org.springframework.boot.web.servlet.FilterRegistrationBean;
                import org.springframework.context.annotation.Bean;
                import org.springframework.http.HttpStatus;
                import org.springframework.http.ProblemDetail;
                import org.springframework.scheduling.annotation.Scheduled;
                import org.springframework.stereotype.Component;
                import org.springframework.transaction.annotation.Transactional;
                import org.springframework.web.bind.annotation.ExceptionHandler;
                import org.springframework.web.bind.annotation.RestControllerAdvice;
                import org.springframework.web.client.RestClient;
                import reactor.core.publisher.Flux;
                import reactor.core.publisher.Mono;

                class %s {
                    interface Invoices { void resume(long term); void pause(); }
                    interface Reminders { void send(long fencingToken); }
                    record ChargeRequest(String id, long amountCents) {}
                    record Receipt(String requestId, String paymentId) {}
                    record Booking() {}
                    record Row() {}
                    record Invoice() {}

                    Cerberus cerberus;
                    Invoices invoices;
                    Reminders reminders;
                    DataSource dataSource;
                    FencedRowsTemplate accounts;
                    String id;
                    long amount;

                    byte[] render(byte[] before) { return before; }

                    class Block {
                %s
                    }
                }
                """.formatted(name, body);
    }
}
