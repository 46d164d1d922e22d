package io.cerberus.spring;

import io.cerberus.micrometer.MicrometerMetrics;
import io.cerberus.micrometer.TraceLinks;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.util.ClassUtils;

/**
 * With {@code io.cerberus:cerberus-micrometer} on the class path, the auto-configured client
 * reports its metrics ({@code cerberus.lock.*}, {@code cerberus.engine.switches}) to the
 * application's {@link MeterRegistry} bean instead of Micrometer's global registry, and observes
 * its waits and holds ({@code cerberus.lock.wait}, {@code cerberus.lock.hold}) in the
 * application's {@link ObservationRegistry}: spans, when the application traces. With Micrometer
 * Tracing and a {@code Tracer} bean, a hold carries its trace and a blocked waiter's span links to
 * it ({@link TraceLinks}). Without a registry bean (no actuator) the client keeps the global
 * registry, without observations.
 */
@AutoConfiguration
@ConditionalOnClass({MeterRegistry.class, MicrometerMetrics.class})
public class CerberusMetricsAutoConfiguration {
    private static final String TRACER = "io.micrometer.tracing.Tracer";

    /**
     * Runs before the application's own customizers (order 0), so one of those may still set other metrics.
     *
     * @param registries the application's registry, if it has one (the primary one if several)
     * @param observations the application's observation registry, if it has one
     * @param beans where a {@code Tracer} bean is looked for, when Micrometer Tracing is on the class path
     * @return a customizer that binds the client's metrics to them
     */
    @Bean
    @Order(0)
    public CerberusBuilderCustomizer cerberusMicrometerMetrics(
            ObjectProvider<MeterRegistry> registries,
            ObjectProvider<ObservationRegistry> observations,
            ListableBeanFactory beans) {
        return builder -> {
            MeterRegistry registry = registries.getIfUnique();
            if (registry != null) {
                ObservationRegistry observing = observations.getIfUnique();
                boolean tracing = observing != null
                        && ClassUtils.isPresent(TRACER, getClass().getClassLoader());
                builder.metrics(new MicrometerMetrics(registry, observing, tracing ? Tracing.links(beans) : null));
            }
        };
    }

    /** Touches Micrometer Tracing's types only once they are known to be on the class path. */
    private static final class Tracing {
        static TraceLinks links(ListableBeanFactory beans) {
            io.micrometer.tracing.Tracer tracer =
                    beans.getBeanProvider(io.micrometer.tracing.Tracer.class).getIfUnique();
            return tracer == null ? null : new TraceLinks(tracer);
        }
    }
}
