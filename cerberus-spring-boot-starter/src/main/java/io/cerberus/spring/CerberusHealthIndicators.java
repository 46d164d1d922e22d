package io.cerberus.spring;

import io.cerberus.Cerberus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of each engine of a client, as {@code /actuator/health/cerberus/<engine>}: UP when
 * the engine answers the light read the failover checks make ({@link Cerberus#checkEngine}),
 * DOWN with the error otherwise (an engine that cannot be reached, or whose server is now set up
 * in a way that breaks a guarantee: an evicting Redis). Details: the engine URI (without password),
 * whether it is the current engine, and the engine's warnings about settings the user accepted
 * (an eviction policy allowed with {@code acceptEviction=true}). An engine that does not answer takes up to the connect timeout to be DOWN.
 * Spring Boot 4's health classes; on Boot 3, {@code cerberus-spring-boot3-support} has the same indicator.
 */
final class CerberusHealthIndicators {
    private CerberusHealthIndicators() {}

    /**
     * @param cerberus the client
     * @return one indicator per engine, named after the engine, in the client's order
     */
    static CompositeHealthContributor of(Cerberus cerberus) {
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
