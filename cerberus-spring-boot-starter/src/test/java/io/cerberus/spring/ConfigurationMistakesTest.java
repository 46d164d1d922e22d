package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.cerberus.Cerberus;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Configuration mistakes that would otherwise lose locks: a misspelt property silently ignored, or
 * no engine at all (once a JVM-local default, that excluded nothing across instances). Each fails
 * the start with what to write instead.
 */
class ConfigurationMistakesTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CerberusAutoConfiguration.class, AopAutoConfiguration.class));

    @Test
    void withoutAnEngineTheStartFailsSayingHowToChooseOne() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("no Cerberus engine is configured")
                    .hasMessageContaining("Set cerberus.engines")
                    .hasMessageContaining("cerberus.engines=mem:");
        });
    }

    @Test
    void aMisspeltPropertyFailsTheStartNamingTheNearestKnownOne() {
        runner.withPropertyValues("cerberus.engine=redis://127.0.0.1:6379").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("unknown Cerberus property")
                    .hasMessageContaining("cerberus.engine (")
                    .hasMessageContaining("did you mean cerberus.engines?")
                    .hasMessageNotContaining("no Cerberus engine is configured");
        });
        runner.withPropertyValues(
                        "cerberus.engines=mem:",
                        "cerberus.idempotency.http.enable=true",
                        "cerberus.failover.checkEvery=1s")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("unknown Cerberus property")
                        .hasMessageContaining("cerberus.idempotency.http.enable (")
                        .hasMessageContaining("did you mean cerberus.idempotency.http.enabled?")
                        .hasMessageNotContaining("check-every"));
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.colour=blue")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("cerberus.colour (")
                        .hasMessageContaining("not a property of the starter")
                        .hasMessageContaining("cerberus.namespace"));
        runner.withPropertyValues("cerberus.engines=mem:", "cerberus.namespace.name=x")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("cerberus.namespace.name ("));
    }

    @Test
    void everyFormOfAKnownPropertyStartsAndSystemPropertiesAreNotChecked() {
        runner.withPropertyValues(
                        "cerberus.engines[0]=mem:forms",
                        "cerberus.defaultLease=20s",
                        "cerberus.idempotency.http.stored-headers[0]=ETag",
                        "cerberus.failover.check-every=2s")
                .withSystemProperties("cerberus.not-the-starters=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(CerberusProperties.class).getDefaultLease())
                            .isEqualTo(Duration.ofSeconds(20));
                });
    }

    @Test
    void aCustomizerMayGiveTheOnlyEngine() {
        runner.withBean(CerberusBuilderCustomizer.class, () -> builder -> builder.engine("own", "mem:own"))
                .run(context ->
                        assertThat(context.getBean(Cerberus.class).engines()).containsExactly("own"));
    }

    @Test
    void aMultiHostUriSplitAtItsCommasFailsTheStartNamingTheFormsThatKeepThem() {
        runner.withPropertyValues("cerberus.engines=zk://a:2181,b:2181/app").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(ConfigurationMistake.class)
                    .hasMessageContaining("cerberus.engines was split at the commas of a multi-host URI")
                    .hasMessageContaining("[zk://a:2181, b:2181/app]")
                    .hasMessageContaining("cerberus.engines[0]=zk://a:2181,b:2181/app")
                    .hasMessageContaining("CERBERUS_ENGINES_0_");
        });
        runner.withPropertyValues("cerberus.engines=redis-sentinel://:pw@a:26379,b:26379,c/mymaster,mem:")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("cerberus.engines[1]=mem:")
                        .hasMessageNotContaining(":pw@"));
    }

    @Test
    void indexedEnginesKeepTheirCommasInPropertiesAndEnvironmentVariables() {
        String sentinel = "redis-sentinel://a:26379,b:26379/mymaster";
        assertThat(bind(new MapConfigurationPropertySource(
                                Map.of("cerberus.engines[0]", sentinel, "cerberus.engines[1]", "mem:")))
                        .getEngines())
                .containsExactly(sentinel, "mem:");
        assertThat(bind(environment(Map.of("CERBERUS_ENGINES_0_", sentinel, "CERBERUS_ENGINES_1_", "mem:")))
                        .getEngines())
                .containsExactly(sentinel, "mem:");
        assertThat(bind(environment(Map.of("CERBERUS_ENGINES_0", sentinel))).getEngines())
                .containsExactly(sentinel);

        List<String> split =
                bind(environment(Map.of("CERBERUS_ENGINES", sentinel))).getEngines();
        assertThat(split)
                .as("one variable for the list")
                .containsExactly("redis-sentinel://a:26379", "b:26379/mymaster");
        assertThatThrownBy(() -> SplitEngineUris.check(split))
                .isInstanceOf(ConfigurationMistake.class)
                .hasMessageContaining("cerberus.engines[0]=" + sentinel);
        SplitEngineUris.check(List.of(sentinel, "mem:", "file:/var/lock/app", "jdbc:datasource"));
    }

    private static ConfigurationPropertySource environment(Map<String, Object> variables) {
        return ConfigurationPropertySource.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
    }

    private static CerberusProperties bind(ConfigurationPropertySource source) {
        return new Binder(source).bind("cerberus", CerberusProperties.class).get();
    }

    @Test
    void anApplicationWithTheTypoInItsYamlDoesNotStartAndSaysWhereAndWhatToWrite() {
        SpringApplication application = new SpringApplication(YamlApp.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        Throwable failure =
                catchThrowable(() -> application.run("--spring.config.location=classpath:mistakes/typo.yml"));
        assertThat(failure)
                .rootCause()
                .hasMessageContaining("cerberus.engine (class path resource [mistakes/typo.yml] - 2:11)")
                .hasMessageContaining("did you mean cerberus.engines?");
        FailureAnalysis analysis = new ConfigurationMistakeAnalyzer().analyze(failure);
        assertThat(analysis).as("shown as a failed start, not a stack trace").isNotNull();
        assertThat(analysis.getDescription())
                .startsWith("unknown Cerberus property")
                .contains("did you mean cerberus.engines?");
        assertThat(analysis.getAction()).startsWith("Correct the name");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class YamlApp {}
}
