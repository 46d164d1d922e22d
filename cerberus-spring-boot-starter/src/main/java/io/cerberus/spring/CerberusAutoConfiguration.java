package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.EngineSwitchListener;
import io.cerberus.FailoverPolicy;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Auto-configures a {@link Cerberus} client from the {@code cerberus.*} properties (see
 * {@link CerberusProperties}), an {@link IdempotencyGuard} over it, and the aspects behind
 * {@link WithDistributedLock @WithDistributedLock} and {@link Idempotent @Idempotent}. Each bean steps
 * aside when the application defines its own of the same type.
 */
// the DataSource's auto-configuration on Boot 4 and on Boot 3; a name that is not there orders nothing
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"
        })
@EnableConfigurationProperties(CerberusProperties.class)
public class CerberusAutoConfiguration {
    /** The engine URI that stands for the application's own {@link DataSource}. */
    static final String DATA_SOURCE_URI = "jdbc:datasource";

    private static final String NO_ENGINE =
            "no Cerberus engine is configured, and the locks of a JVM-local default would exclude"
                    + " nothing between the application's instances";
    private static final String CHOOSE_ENGINE =
            "Set cerberus.engines to the store the instances share, such as redis://redis:6379,"
                    + " zk://zk1:2181, etcd://etcd:2379, jdbc:datasource (the application's DataSource) or file:/var/lock/app (one machine);"
                    + " see the starter's SPRING.md. For tests, or a tool that runs as one process, cerberus.engines=mem: keeps locks in this JVM";

    /**
     * Fails the start when the configuration names a {@code cerberus.*} property the starter does
     * not have (a misspelt one would be ignored), naming the nearest known property.
     *
     * @param environment the application's environment
     * @return a marker that the check passed, which the client's bean waits for
     * @throws IllegalArgumentException naming each unknown property, where it was set, and the nearest known one
     */
    @Bean
    static PropertiesChecked cerberusPropertiesCheck(Environment environment) {
        UnknownProperties.check(environment);
        return new PropertiesChecked();
    }

    /** That the {@code cerberus.*} properties of the environment are all known ({@link UnknownProperties}). */
    static final class PropertiesChecked {}

    /**
     * The client, closed with the application context (releasing every lock it still holds).
     *
     * @param checked the properties' names were checked first
     * @param properties the {@code cerberus.*} settings
     * @param dataSources the application's data source, for {@code jdbc:datasource} engines
     * @param customizers adjust the builder after the properties
     * @param switchListeners told of every engine switch
     * @return the connected client
     * @throws IllegalArgumentException if a setting breaks a rule, no engine is configured, or a
     *     multi-host URI was split at its commas (the application does not start)
     * @throws io.cerberus.EngineUnavailableException if an engine cannot be reached within the connect timeout
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Cerberus cerberus(
            PropertiesChecked checked,
            CerberusProperties properties,
            ObjectProvider<DataSource> dataSources,
            ObjectProvider<CerberusBuilderCustomizer> customizers,
            ObjectProvider<EngineSwitchListener> switchListeners,
            BeanFactory beanFactory) {
        CerberusBuilder builder = Cerberus.builder()
                .namespace(properties.getNamespace())
                .defaultLease(properties.getDefaultLease())
                .connectTimeout(properties.getConnectTimeout());
        List<String> engines = properties.getEngines() == null ? List.of() : properties.getEngines();
        if (engines.isEmpty() && customizers.stream().findAny().isEmpty()) {
            throw new ConfigurationMistake(NO_ENGINE, CHOOSE_ENGINE);
        }
        SplitEngineUris.check(engines);
        for (String uri : engines) {
            if (isDataSourceUri(uri)) {
                DataSourceEngines.add(builder, uri, dataSources);
            } else if (isCuratorUri(uri)) {
                CuratorEngines.add(builder, uri, beanFactory);
            } else {
                builder.engine(uri);
            }
        }
        if (properties.getLockDelay() != null) {
            builder.lockDelay(properties.getLockDelay());
        }
        failoverPolicy(properties.getFailover()).ifPresent(builder::failover);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        Cerberus cerberus = builder.build();
        switchListeners.orderedStream().forEach(cerberus::onEngineSwitch);
        return cerberus;
    }

    /**
     * The options of the {@link IdempotencyGuard} bean and of {@link Idempotent @Idempotent}
     * methods, from {@code cerberus.idempotency.*}. Define a bean of your own to set what has no
     * property (remembered failures).
     *
     * @param properties the {@code cerberus.*} settings
     * @return the options
     * @throws IllegalArgumentException if a setting breaks a rule
     */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyOptions cerberusIdempotencyOptions(CerberusProperties properties) {
        return idempotencyOptions(properties.getIdempotency());
    }

    /**
     * A guard whose records live on the engine that is current when it is made. Lazy, so a
     * client on an engine without idempotency records (Redlock) starts as long as nothing asks for it.
     *
     * @param cerberus the client
     * @param options the guard's options
     * @return the guard
     * @throws io.cerberus.UnsupportedCapabilityException if the engine keeps no idempotency records
     */
    @Bean
    @Lazy
    @ConditionalOnMissingBean
    public IdempotencyGuard cerberusIdempotencyGuard(Cerberus cerberus, IdempotencyOptions options) {
        return cerberus.idempotency(options);
    }

    /**
     * The elections of this instance: those its {@link LeaderWork} beans and
     * {@code cerberus.leadership.elections} name, run from start-up to shutdown.
     *
     * @param cerberus the client
     * @param works the beans that work only while their instance leads
     * @param properties the {@code cerberus.*} properties
     * @param events where the {@link LeadershipEvent}s go
     * @return the elections
     */
    @Bean
    @ConditionalOnMissingBean
    public LeaderElections cerberusLeaderElections(
            Cerberus cerberus,
            ObjectProvider<LeaderWork> works,
            CerberusProperties properties,
            org.springframework.context.ApplicationEventPublisher events) {
        return new LeaderElections(
                cerberus,
                works.orderedStream().toList(),
                properties.getLeadership().getElections(),
                events);
    }

    /**
     * The aspect behind {@link ExclusiveRun @ExclusiveRun}.
     *
     * @param cerberus the client whose locks it takes
     * @return the aspect
     */
    @Bean
    static ExclusiveRunAspect cerberusExclusiveRunAspect(ObjectProvider<Cerberus> cerberus) {
        return new ExclusiveRunAspect(cerberus);
    }

    /**
     * The aspect behind {@link WithDistributedLock @WithDistributedLock}.
     *
     * @param cerberus the client whose locks it takes
     * @param beanFactory resolves {@code @bean} references in keys
     * @return the aspect
     */
    @Bean
    static WithDistributedLockAspect cerberusDistributedLockAspect(
            ObjectProvider<Cerberus> cerberus, BeanFactory beanFactory) {
        return new WithDistributedLockAspect(cerberus, new KeyExpressions(beanFactory));
    }

    /**
     * The aspect behind {@link Idempotent @Idempotent}.
     *
     * @param cerberus the client whose guards it uses
     * @param options the base options, adjusted per method
     * @param beanFactory resolves {@code @bean} references in keys, has the transaction attributes and the application's JSON mapper
     * @return the aspect
     */
    @Bean
    static IdempotentAspect cerberusIdempotentAspect(
            ObjectProvider<Cerberus> cerberus,
            ObjectProvider<IdempotencyOptions> options,
            ObjectProvider<CerberusProperties> properties,
            ObjectProvider<DataSource> dataSources,
            BeanFactory beanFactory) {
        return new IdempotentAspect(
                cerberus,
                options,
                new KeyExpressions(beanFactory),
                new TransactionRules(beanFactory),
                new TransactionalResults(beanFactory, () -> recordsDataSource(properties, dataSources)),
                new ResultJsons(beanFactory));
    }

    /**
     * @return the application's DataSource when the guards' records are in it (the first engine is
     *     {@code jdbc:datasource}) and results are to be written in transactions; else null
     */
    private static DataSource recordsDataSource(
            ObjectProvider<CerberusProperties> properties, ObjectProvider<DataSource> dataSources) {
        CerberusProperties settings = properties.getIfAvailable();
        if (settings == null
                || !settings.getIdempotency().isCompleteInTransaction()
                || settings.getEngines() == null
                || settings.getEngines().isEmpty()
                || !isDataSourceUri(settings.getEngines().get(0))) {
            return null;
        }
        return dataSources.getIfUnique();
    }

    /**
     * Checks the annotated methods of every bean at its creation, so that a bad annotation value
     * fails the start.
     *
     * @return the check
     */
    @Bean
    static AnnotatedMethodsCheck cerberusAnnotatedMethodsCheck() {
        return new AnnotatedMethodsCheck();
    }

    static boolean isDataSourceUri(String uri) {
        return uri != null
                && uri.regionMatches(true, 0, DATA_SOURCE_URI, 0, DATA_SOURCE_URI.length())
                && (uri.length() == DATA_SOURCE_URI.length()
                        || "?;".indexOf(uri.charAt(DATA_SOURCE_URI.length())) >= 0);
    }

    /** @return whether the URI stands for the application's CuratorFramework: {@code zk://curator[/root][?...]} */
    static boolean isCuratorUri(String uri) {
        String prefix = "zk://curator";
        return uri != null
                && uri.startsWith(prefix)
                && (uri.length() == prefix.length() || "/?".indexOf(uri.charAt(prefix.length())) >= 0);
    }

    static java.util.Optional<FailoverPolicy> failoverPolicy(CerberusProperties.Failover failover) {
        if (!failover.isEnabled()) {
            return java.util.Optional.empty();
        }
        FailoverPolicy policy = FailoverPolicy.after(required("cerberus.failover.after", failover.getAfter()))
                .checkEvery(required("cerberus.failover.check-every", failover.getCheckEvery()));
        if (failover.getFailBackAfter() != null) {
            policy = policy.failBackAfter(failover.getFailBackAfter());
        }
        return java.util.Optional.of(policy);
    }

    static IdempotencyOptions idempotencyOptions(CerberusProperties.Idempotency settings) {
        IdempotencyOptions options = IdempotencyOptions.defaults()
                .withLease(required("cerberus.idempotency.lease", settings.getLease()))
                .withStoreAttempts(settings.getStoreAttempts());
        // unlike the core's default, a duplicate is rejected unless a wait is set: the Idempotency-Key filter answers
        // 409 at once to a request whose first copy still runs, as HTTP clients of idempotency keys expect
        options = settings.getWaitWhenInProgress() != null
                ? options.waitingWhenInProgress(settings.getWaitWhenInProgress())
                : options.rejectingWhenInProgress();
        return settings.isFailOpen() ? options.failingOpen() : options;
    }

    private static Duration required(String property, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException(property + " must not be empty");
        }
        return value;
    }

    /** Keeps cerberus-jdbc optional: this class is only loaded for a {@code jdbc:datasource} engine. */
    private static final class DataSourceEngines {
        private static final String JDBC_OPTIONS = "io.cerberus.jdbc.JdbcOptions";

        static void add(CerberusBuilder builder, String uri, ObjectProvider<DataSource> dataSources) {
            if (!ClassUtils.isPresent(JDBC_OPTIONS, CerberusAutoConfiguration.class.getClassLoader())) {
                throw new IllegalArgumentException("engine " + Redaction.redact(uri)
                        + " needs the jdbc engine: add the dependency io.cerberus:cerberus-jdbc");
            }
            DataSource dataSource = dataSources.getIfUnique();
            if (dataSource == null) {
                throw new IllegalArgumentException(
                        "engine " + Redaction.redact(uri) + " uses the application's DataSource, but the context has "
                                + (dataSources.stream().findAny().isPresent() ? "several and none is @Primary" : "none")
                                + "; define one, or give a JDBC URL such as jdbc:postgresql://host:5432/db");
            }
            builder.engine(uri, io.cerberus.jdbc.JdbcOptions.dataSource(dataSource));
        }
    }

    /** Keeps cerberus-zookeeper optional: this class is only loaded for a {@code zk://curator} engine. */
    private static final class CuratorEngines {
        private static final String ZOOKEEPER_OPTIONS = "io.cerberus.zookeeper.ZooKeeperOptions";

        static void add(CerberusBuilder builder, String uri, BeanFactory beanFactory) {
            if (!ClassUtils.isPresent(ZOOKEEPER_OPTIONS, CerberusAutoConfiguration.class.getClassLoader())) {
                throw new IllegalArgumentException("engine " + Redaction.redact(uri)
                        + " needs the ZooKeeper engine: add the dependency io.cerberus:cerberus-zookeeper");
            }
            ObjectProvider<org.apache.curator.framework.CuratorFramework> clients =
                    beanFactory.getBeanProvider(org.apache.curator.framework.CuratorFramework.class);
            org.apache.curator.framework.CuratorFramework client = clients.getIfUnique();
            if (client == null) {
                throw new IllegalArgumentException("engine " + Redaction.redact(uri)
                        + " uses the application's CuratorFramework, but the context has "
                        + (clients.stream().findAny().isPresent() ? "several and none is @Primary" : "none")
                        + "; define one (started), or give the ensemble: zk://host1:2181,host2:2181/root");
            }
            builder.engine(uri, io.cerberus.zookeeper.ZooKeeperOptions.client(client));
        }
    }
}
