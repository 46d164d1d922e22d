package io.cerberus.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * In a servlet or WebFlux application, unless {@code cerberus.web.error-statuses.enabled=false}:
 * {@link CerberusErrorStatuses}, which answers a busy lock 409 and an unreachable engine 503
 * instead of 500. The application's own handlers for these exceptions come first.
 */
@AutoConfiguration(after = CerberusAutoConfiguration.class)
@ConditionalOnWebApplication
@ConditionalOnClass(name = "org.springframework.http.ProblemDetail")
@ConditionalOnProperty(prefix = "cerberus.web.error-statuses", name = "enabled", matchIfMissing = true)
@ConditionalOnBean(CerberusProperties.class)
public class CerberusErrorStatusesAutoConfiguration {

    /**
     * @param properties the {@code cerberus.web.error-statuses.*} settings
     * @return the advice, of lowest precedence
     * @throws IllegalArgumentException if the retry-after is negative
     */
    @Bean
    @ConditionalOnMissingBean(name = "cerberusErrorStatuses")
    CerberusErrorStatuses cerberusErrorStatuses(CerberusProperties properties) {
        return new CerberusErrorStatuses(properties.getWeb().getErrorStatuses().getRetryAfter());
    }
}
