package io.cerberus.spring;

import io.cerberus.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * With {@code io.cerberus:cerberus-micrometer} on the class path, the auto-configured client
 * reports its metrics ({@code cerberus.lock.*}, {@code cerberus.engine.switches}) to the
 * application's {@link MeterRegistry} bean instead of Micrometer's global registry. Without such
 * a bean (no actuator) the client keeps the global registry.
 */
@AutoConfiguration
@ConditionalOnClass({MeterRegistry.class, MicrometerMetrics.class})
public class CerberusMetricsAutoConfiguration {

    /**
     * Runs before the application's own customizers (order 0), so one of those may still set other metrics.
     *
     * @param registries the application's registry, if it has one (the primary one if several)
     * @return a customizer that binds the client's metrics to it
     */
    @Bean
    @Order(0)
    public CerberusBuilderCustomizer cerberusMicrometerMetrics(ObjectProvider<MeterRegistry> registries) {
        return builder -> {
            MeterRegistry registry = registries.getIfUnique();
            if (registry != null) {
                builder.metrics(new MicrometerMetrics(registry));
            }
        };
    }
}
