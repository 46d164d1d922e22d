package io.cerberus.spring.boot3;

import io.cerberus.Cerberus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * On Spring Boot 3 with its actuator: a health indicator per engine of the client, as
 * {@code /actuator/health/cerberus/<engine>} (off with {@code management.health.cerberus.enabled=false}).
 * The same indicator as the starter's on Boot 4, whose health classes live in other packages; this
 * class is only loaded where Boot 3's {@code org.springframework.boot.actuate.health} package is.
 */
@AutoConfiguration(afterName = "io.cerberus.spring.CerberusAutoConfiguration")
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.health.CompositeHealthContributor",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@ConditionalOnBean(Cerberus.class)
public class CerberusBoot3HealthAutoConfiguration {

    /**
     * @param cerberus the client
     * @return one health indicator per engine, under the name {@code cerberus}
     */
    @Bean
    @ConditionalOnEnabledHealthIndicator("cerberus")
    @ConditionalOnMissingBean(name = "cerberusHealthContributor")
    public CompositeHealthContributor cerberusHealthContributor(Cerberus cerberus) {
        Map<String, HealthContributor> indicators = new LinkedHashMap<>();
        for (String engine : cerberus.engines()) {
            indicators.put(engine, (HealthIndicator) () -> check(cerberus, engine));
        }
        return CompositeHealthContributor.fromMap(indicators);
    }

    private static Health check(Cerberus cerberus, String engine) {
        Health.Builder health;
        try {
            List<String> warnings = cerberus.checkEngine(engine);
            health = Health.up();
            if (!warnings.isEmpty()) {
                health.withDetail("warnings", warnings);
            }
        } catch (RuntimeException e) {
            health = Health.down().withDetail("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return health.withDetail("uri", cerberus.engineUri(engine))
                .withDetail("current", engine.equals(cerberus.currentEngine()))
                .build();
    }
}
