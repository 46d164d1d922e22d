package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyOptions;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * In a servlet web application with {@code cerberus.idempotency.http.enabled=true}: the
 * {@link IdempotencyKeyFilter} over the configured paths and methods.
 */
@AutoConfiguration(after = CerberusAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(OncePerRequestFilter.class)
@ConditionalOnProperty(prefix = "cerberus.idempotency.http", name = "enabled", havingValue = "true")
@ConditionalOnBean(Cerberus.class)
public class CerberusWebAutoConfiguration {
    /** After security filters (which are ordered at -100), so an unauthenticated request claims no key. */
    static final int FILTER_ORDER = 0;

    /**
     * @param cerberus the client whose first engine keeps the records
     * @param options the guard's options ({@code cerberus.idempotency.*})
     * @param properties the {@code cerberus.idempotency.http.*} settings
     * @return the filter, registered for every URL (it selects the paths itself)
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     */
    @Bean
    @ConditionalOnMissingBean(name = "cerberusIdempotencyKeyFilter")
    public FilterRegistrationBean<IdempotencyKeyFilter> cerberusIdempotencyKeyFilter(
            ObjectProvider<Cerberus> cerberus,
            ObjectProvider<IdempotencyOptions> options,
            CerberusProperties properties) {
        FilterRegistrationBean<IdempotencyKeyFilter> registration =
                new FilterRegistrationBean<>(new IdempotencyKeyFilter(
                        cerberus::getObject,
                        options::getObject,
                        properties.getIdempotency().getHttp()));
        registration.setName("cerberusIdempotencyKeyFilter");
        registration.setOrder(FILTER_ORDER);
        return registration;
    }
}
