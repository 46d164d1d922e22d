package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cerberus.servers.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

/**
 * An application whose Cerberus client cannot start fails with Spring Boot's "APPLICATION FAILED
 * TO START" summary (the analyzer is found through spring.factories), naming the engine without
 * its password and what to do.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartFailureTest {

    @Test
    void anUnreachableRedisIsSummarizedWithItsUriWithoutThePassword(CapturedOutput output) throws IOException {
        assumeThat(ClassUtils.isPresent("io.cerberus.redis.RedisEngineProvider", null))
                .as("the redis engine is on the class path")
                .isTrue();
        int port = freePort();
        Throwable failure =
                start("--cerberus.engines=redis://:s3cret@127.0.0.1:" + port, "--cerberus.connect-timeout=2s");

        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("A Cerberus engine could not be used at start-up")
                .contains("127.0.0.1:" + port)
                .contains("cerberus.connect-timeout")
                .doesNotContain("s3cret");
        FailureAnalysis analysis = new CerberusStartFailureAnalyzer().analyze(failure);
        assertThat(analysis.getDescription()).contains("could not connect to redis engine");
        assertThat(analysis.getAction()).isEqualTo(CerberusStartFailureAnalyzer.UNAVAILABLE_ACTION);
    }

    @Test
    void aWrongPasswordIsSummarizedWithoutIt(CapturedOutput output) {
        assumeThat(ClassUtils.isPresent("io.cerberus.redis.RedisEngineProvider", null))
                .as("the redis engine is on the class path")
                .isTrue();
        try (RedisServer server = RedisServer.start("--requirepass", "the-right-one")) {
            String hostPort = server.uri().substring("redis://".length());
            Throwable failure = start("--cerberus.engines=redis://:not-the-password@" + hostPort);

            assertThat(output.getOut() + output.getErr())
                    .contains("APPLICATION FAILED TO START")
                    .contains("refused the user or password of the URI")
                    .contains(hostPort)
                    .doesNotContain("not-the-password")
                    .doesNotContain("the-right-one");
            assertThat(new CerberusStartFailureAnalyzer().analyze(failure).getAction())
                    .contains("user and password");
        }
    }

    @Test
    void aRedisThatMayEvictLockKeysIsSummarizedWithTheWaysOut(CapturedOutput output) {
        assumeThat(ClassUtils.isPresent("io.cerberus.redis.RedisEngineProvider", null))
                .as("the redis engine is on the class path")
                .isTrue();
        try (RedisServer server = RedisServer.start("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")) {
            Throwable failure = start("--cerberus.engines=" + server.uri());

            assertThat(output.getOut() + output.getErr())
                    .contains("APPLICATION FAILED TO START")
                    .contains("set up in a way that breaks a lock guarantee")
                    .contains("allkeys-lru")
                    .contains("accept the risk with the engine URI's opt-in parameter");
            assertThat(new CerberusStartFailureAnalyzer().analyze(failure).getAction())
                    .isEqualTo(CerberusStartFailureAnalyzer.UNSAFE_ACTION);
        }
    }

    @Test
    void aFileEngineThatCannotMakeItsDirectoryIsSummarized(@TempDir Path directory, CapturedOutput output)
            throws IOException {
        Path inTheWay = Files.createFile(directory.resolve("a-file"));
        Throwable failure = start("--cerberus.engines=file:" + inTheWay.resolve("locks"));

        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("A Cerberus engine could not be used at start-up")
                .contains("Check that the engine runs");
        assertThat(new CerberusStartFailureAnalyzer().analyze(failure).getDescription())
                .contains("a-file");
    }

    @Test
    void aRefusedSettingIsSummarizedWithTheRule(CapturedOutput output) {
        Throwable failure = start("--cerberus.engines=mem:", "--cerberus.default-lease=10ms");

        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("The Cerberus client refused its configuration")
                .contains("Correct the cerberus.* property");
        assertThat(new CerberusStartFailureAnalyzer().analyze(failure).getDescription())
                .contains("lease");
    }

    @Test
    void otherFailuresAreLeftToOtherAnalyzers() {
        assertThat(new CerberusStartFailureAnalyzer().analyze(new IllegalArgumentException("not ours")))
                .isNull();
        assertThat(new CerberusStartFailureAnalyzer()
                        .analyze(new ConfigurationMistake("unknown Cerberus property", "Correct it")))
                .isNull();
    }

    private static Throwable start(String... arguments) {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        Throwable failure = catchThrowable(() -> application.run(arguments));
        assertThat(failure).as("the start failed").isNotNull();
        return failure;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {}
}
