package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.web.filter.OncePerRequestFilter;

/** Each optional part is configured only when its classes are present and it is asked for. */
class OptionalPartsTest {
    private static final AutoConfigurations ALL = AutoConfigurations.of(
            CerberusAutoConfiguration.class,
            AopAutoConfiguration.class,
            CerberusMetricsAutoConfiguration.class,
            CerberusActuatorAutoConfiguration.class,
            CerberusWebAutoConfiguration.class,
            CerberusWebFluxAutoConfiguration.class);

    @Test
    void withoutActuatorWebOrMicrometerOnlyTheClientIsConfigured() {
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:")
                .withClassLoader(new FilteredClassLoader(
                        ConditionalOnAvailableEndpoint.class, OncePerRequestFilter.class, MicrometerMetrics.class))
                .withPropertyValues("cerberus.idempotency.http.enabled=true")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Cerberus.class);
                    assertThat(context)
                            .doesNotHaveBean(CerberusLocksEndpoint.class)
                            .doesNotHaveBean("cerberusHealthContributor")
                            .doesNotHaveBean("cerberusIdempotencyKeyFilter")
                            .doesNotHaveBean("cerberusMicrometerMetrics");
                });
    }

    @Test
    void theForceReleaseEndpointIsOffEvenWhenExposedUntilItsAccessIsGiven() {
        WebApplicationContextRunner web = new WebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(
                        "cerberus.engines=mem:", "management.endpoints.web.exposure.include=cerberus,cerberusunlock");
        web.run(context -> assertThat(context)
                .hasSingleBean(CerberusLocksEndpoint.class)
                .doesNotHaveBean(CerberusUnlockEndpoint.class));
        // upper case: a bare context runner has no relaxed conversion of enum values (an application has)
        web.withPropertyValues("management.endpoint.cerberusunlock.access=UNRESTRICTED")
                .run(context -> assertThat(context).hasSingleBean(CerberusUnlockEndpoint.class));
    }

    @Test
    void theFilterNeedsItsPropertyAndAServletApplication() {
        WebApplicationContextRunner web =
                new WebApplicationContextRunner().withConfiguration(ALL).withPropertyValues("cerberus.engines=mem:");
        web.run(context -> assertThat(context).doesNotHaveBean("cerberusIdempotencyKeyFilter"));
        web.withPropertyValues("cerberus.idempotency.http.enabled=true")
                .run(context -> assertThat(context.getBean("cerberusIdempotencyKeyFilter"))
                        .isInstanceOf(FilterRegistrationBean.class));
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:")
                .withPropertyValues("cerberus.idempotency.http.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean("cerberusIdempotencyKeyFilter"));
    }

    @Test
    void aReactiveApplicationGetsTheWebFluxFilterWhenReactorIsThere() {
        ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:", "cerberus.idempotency.http.enabled=true");
        reactive.run(context -> assertThat(context.getBean("cerberusIdempotencyKeyFilter"))
                .isInstanceOf(ReactiveIdempotencyKeyFilter.class));
        reactive.withClassLoader(new FilteredClassLoader("reactor.core"))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("cerberusIdempotencyKeyFilter"));
        new WebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:", "cerberus.idempotency.http.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean(ReactiveIdempotencyKeyFilter.class));
    }

    @Test
    void aBadFilterSettingFailsTheStart() {
        new WebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:")
                .withPropertyValues(
                        "cerberus.idempotency.http.enabled=true", "cerberus.idempotency.http.retention=10ms")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("cerberus.idempotency.http.retention must be at least 1s"));
    }

    @Test
    void theClientReportsToTheRegistryBean() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("cerberus.engines=mem:")
                .withBean(SimpleMeterRegistry.class, () -> registry)
                .run(context -> {
                    assertThat(context.getBean(Cerberus.class).lock("metered").tryLock())
                            .isTrue();
                    assertThat(registry.find("cerberus.lock.acquire").timer())
                            .as("the client's acquire timer in the application's registry")
                            .isNotNull()
                            .satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
                });
    }
}
