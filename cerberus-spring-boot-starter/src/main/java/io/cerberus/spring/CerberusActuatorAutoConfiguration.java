package io.cerberus.spring;

import io.cerberus.Cerberus;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Spring Boot's actuator on the class path: a health indicator per engine of the client
 * ({@code /actuator/health/cerberus}, off with {@code management.health.cerberus.enabled=false})
 * the read-only {@code cerberus} endpoint listing held locks ({@link CerberusLocksEndpoint};
 * exposed like any endpoint: {@code management.endpoints.web.exposure.include=health,cerberus}), and
 * {@code cerberusleadership}, who leads this instance's elections ({@link CerberusLeadershipEndpoint}),
 * and {@code cerberusunlock}, an operator's force release ({@link CerberusUnlockEndpoint}), whose
 * access is {@code none} unless configured.
 *
 * <p>Spring Boot 4 moved the health classes to {@code org.springframework.boot.health}; the health
 * indicator here is Boot 4's, in a nested class that is only read when those classes are there.
 * On Boot 3, {@code cerberus-spring-boot3-support} (which the starter brings) configures Boot 3's.
 * The endpoint's classes are the same on both.
 */
@AutoConfiguration(after = CerberusAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(Cerberus.class)
public class CerberusActuatorAutoConfiguration {

    /**
     * @param cerberus the client
     * @return the endpoint listing held locks
     */
    @Bean
    @ConditionalOnAvailableEndpoint
    @ConditionalOnMissingBean
    public CerberusLocksEndpoint cerberusLocksEndpoint(Cerberus cerberus) {
        return new CerberusLocksEndpoint(cerberus);
    }

    /**
     * @param cerberus the client
     * @return the endpoint freeing a stuck lock; its access is none unless configured
     */
    @Bean
    @ConditionalOnAvailableEndpoint
    @ConditionalOnMissingBean
    public CerberusUnlockEndpoint cerberusUnlockEndpoint(Cerberus cerberus) {
        return new CerberusUnlockEndpoint(cerberus);
    }

    /**
     * @param elections this instance's elections
     * @return the endpoint showing who leads
     */
    @Bean
    @ConditionalOnAvailableEndpoint
    @ConditionalOnMissingBean
    @ConditionalOnBean(LeaderElections.class)
    public CerberusLeadershipEndpoint cerberusLeadershipEndpoint(LeaderElections elections) {
        return new CerberusLeadershipEndpoint(elections);
    }

    /** Spring Boot 4's health indicator; not read on Boot 3, whose classes are elsewhere. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.CompositeHealthContributor")
    static class Boot4Health {
        /**
         * @param cerberus the client
         * @return one health indicator per engine, under the name {@code cerberus}
         */
        @Bean
        @ConditionalOnEnabledHealthIndicator("cerberus")
        @ConditionalOnMissingBean(name = "cerberusHealthContributor")
        CompositeHealthContributor cerberusHealthContributor(Cerberus cerberus) {
            return CerberusHealthIndicators.of(cerberus);
        }
    }
}
