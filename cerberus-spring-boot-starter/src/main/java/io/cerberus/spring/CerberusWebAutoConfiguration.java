package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.spi.support.Redaction;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
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
     * @param dataSources the application's DataSource, for {@code cerberus.idempotency.http.transaction}
     * @param beans where its transaction manager is
     * @return the filter, registered for every URL (it selects the paths itself)
     * @throws IllegalArgumentException if a setting is empty or a path pattern does not parse
     * @throws ConfigurationMistake if {@code transaction} is on without the engine {@code jdbc:datasource}, a single
     *     DataSource and a single transaction manager
     */
    @Bean
    @ConditionalOnMissingBean(name = "cerberusIdempotencyKeyFilter")
    public FilterRegistrationBean<IdempotencyKeyFilter> cerberusIdempotencyKeyFilter(
            ObjectProvider<Cerberus> cerberus,
            ObjectProvider<IdempotencyOptions> options,
            CerberusProperties properties,
            ObjectProvider<DataSource> dataSources,
            BeanFactory beans) {
        FilterRegistrationBean<IdempotencyKeyFilter> registration =
                new FilterRegistrationBean<>(new IdempotencyKeyFilter(
                        cerberus::getObject,
                        options::getObject,
                        properties.getIdempotency().getHttp(),
                        transactions(properties, dataSources, beans)));
        registration.setName("cerberusIdempotencyKeyFilter");
        registration.setOrder(FILTER_ORDER);
        return registration;
    }

    /** @return the requests' transactions when {@code cerberus.idempotency.http.transaction} is on; else null */
    private static RequestTransactions transactions(
            CerberusProperties properties, ObjectProvider<DataSource> dataSources, BeanFactory beans) {
        if (!properties.getIdempotency().getHttp().isTransaction()) {
            return null;
        }
        List<String> engines = properties.getEngines();
        if (engines == null || engines.isEmpty() || !CerberusAutoConfiguration.isDataSourceUri(engines.get(0))) {
            throw new ConfigurationMistake(
                    "cerberus.idempotency.http.transaction=true writes each stored response in the request's"
                            + " transaction, so the idempotency records must be in the application's DataSource, but"
                            + " the first engine is "
                            + (engines == null || engines.isEmpty() ? "none" : Redaction.redact(engines.get(0))),
                    "Set cerberus.engines to jdbc:datasource, or leave the setting out");
        }
        DataSource dataSource = dataSources.getIfUnique();
        if (dataSource == null) {
            throw new ConfigurationMistake(
                    "cerberus.idempotency.http.transaction=true needs the application's DataSource, but the context"
                            + " has none or several",
                    "Define a single DataSource, or leave the setting out");
        }
        return RequestTransactions.of(beans, dataSource);
    }
}
