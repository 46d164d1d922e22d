package io.cerberus.spring;

import io.cerberus.Cerberus;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * With Spring Boot's actuator on the class path: a health indicator per engine of the client
 * ({@code /actuator/health/cerberus}, off with {@code management.health.cerberus.enabled=false})
 * and the read-only {@code cerberus} endpoint listing held locks ({@link CerberusLocksEndpoint};
 * exposed like any endpoint: {@code management.endpoints.web.exposure.include=health,cerberus}).
 */
@AutoConfiguration(after = CerberusAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(Cerberus.class)
public class CerberusActuatorAutoConfiguration {

    /**
     * @param cerberus the client
     * @return one health indicator per engine, under the name {@code cerberus}
     */
    @Bean
    @ConditionalOnEnabledHealthIndicator("cerberus")
    @ConditionalOnMissingBean(name = "cerberusHealthContributor")
    public CompositeHealthContributor cerberusHealthContributor(Cerberus cerberus) {
        return CerberusHealthIndicators.of(cerberus);
    }

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
}
