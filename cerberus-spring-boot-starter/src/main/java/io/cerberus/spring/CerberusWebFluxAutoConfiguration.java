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
import org.springframework.context.annotation.Bean;

/**
 * In a reactive (WebFlux) web application with {@code cerberus.idempotency.http.enabled=true}: the
 * {@link ReactiveIdempotencyKeyFilter} over the configured paths and methods, with the settings and
 * answers of the servlet filter.
 */
@AutoConfiguration(after = CerberusAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "reactor.core.publisher.Mono"})
@ConditionalOnProperty(prefix = "cerberus.idempotency.http", name = "enabled", havingValue = "true")
@ConditionalOnBean(Cerberus.class)
public class CerberusWebFluxAutoConfiguration {

    /**
     * @param cerberus the client whose first engine keeps the records
     * @param options the guard's options ({@code cerberus.idempotency.*})
     * @param properties the {@code cerberus.idempotency.http.*} settings
     * @return the filter (it selects the paths itself), after security filters
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     * @throws ConfigurationMistake if {@code cerberus.idempotency.http.transaction} is on: a JDBC transaction is bound
     *     to a thread, and a reactive request has none
     */
    @Bean
    @ConditionalOnMissingBean(name = "cerberusIdempotencyKeyFilter")
    public ReactiveIdempotencyKeyFilter cerberusIdempotencyKeyFilter(
            ObjectProvider<Cerberus> cerberus,
            ObjectProvider<IdempotencyOptions> options,
            CerberusProperties properties) {
        if (properties.getIdempotency().getHttp().isTransaction()) {
            throw new ConfigurationMistake(
                    "cerberus.idempotency.http.transaction=true runs a request in a JDBC transaction bound to its"
                            + " thread, which a WebFlux request does not have",
                    "Leave the setting out; write the result in your transaction with IdempotencyAttempt.completeIn");
        }
        return new ReactiveIdempotencyKeyFilter(
                cerberus::getObject,
                options::getObject,
                properties.getIdempotency().getHttp());
    }
}
