package io.cerberus.spring;

import io.cerberus.CerberusBuilder;

/**
 * A bean that adjusts the auto-configured client's builder after the {@code cerberus.*} properties
 * were applied and before the client is built: metrics, an extra engine with options that do not
 * fit in a URI. Customizers run in {@link org.springframework.core.annotation.Order} order.
 *
 * <pre>{@code
 * @Bean
 * CerberusBuilderCustomizer redisWithSecrets(Secrets secrets) {
 *     return builder -> builder.engine("backup", "redis://cache:6379", RedisOptions.builder().password(secrets.redis()).build());
 * }
 * }</pre>
 */
@FunctionalInterface
public interface CerberusBuilderCustomizer {

    /**
     * @param builder the builder, with the properties already applied
     */
    void customize(CerberusBuilder builder);
}
