package io.cerberus.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.jdbc.JdbcOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Lock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.jdbc.lock.LockRepository;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * The Java examples of the section "From Spring Integration" of docs/MIGRATION.md are the regions
 * of this class between {@code // tag::NAME[]} and {@code // end::NAME[]}, compiled with the
 * module's tests (the "before" side against the registries it replaces). The test checks that each
 * region appears verbatim as a Java block of that section and that the section has no other Java
 * block; the fencing example also runs, on {@code mem:}.
 */
class MigrationExamplesTest {
    private static final Pattern TAG = Pattern.compile("(?m)^( *)// tag::([a-z-]+)\\[\\]\\n(.*?)^ *// end::\\2\\[\\]");
    private static final Pattern JAVA_BLOCK = Pattern.compile("(?s)```java\\n(.*?)```");

    static class RedisBefore {
        // tag::redis-before[]
        @Bean
        ExpirableLockRegistry<DistributedLock> lockRegistry(RedisConnectionFactory connectionFactory) {
            return new RedisLockRegistry(connectionFactory, "orders");
        }
        // end::redis-before[]
    }

    static class RedisAfter {
        // tag::redis-after[]
        @Bean
        ExpirableLockRegistry<DistributedLock> lockRegistry(Cerberus cerberus) {
            return new CerberusLockRegistry(cerberus, "orders");
        }
        // end::redis-after[]
    }

    static class JdbcBefore {
        // tag::jdbc-before[]
        @Bean
        DefaultLockRepository lockRepository(DataSource dataSource) {
            return new DefaultLockRepository(dataSource);
        }

        @Bean
        ExpirableLockRegistry<DistributedLock> lockRegistry(LockRepository lockRepository) {
            return new JdbcLockRegistry(lockRepository);
        }
        // end::jdbc-before[]
    }

    static class JdbcAfter {
        // tag::jdbc-after[]
        @Bean
        Cerberus cerberus(DataSource dataSource) {
            return Cerberus.builder()
                    .engine("jdbc:postgresql://db/app", JdbcOptions.dataSource(dataSource))
                    .build();
        }

        @Bean
        ExpirableLockRegistry<DistributedLock> lockRegistry(Cerberus cerberus) {
            return new CerberusLockRegistry(cerberus);
        }
        // end::jdbc-after[]
    }

    static class LeaderBefore {
        // tag::leader-before[]
        @Bean
        LockRegistryLeaderInitiator leaderInitiator(RedisConnectionFactory connectionFactory) {
            return new LockRegistryLeaderInitiator(new RedisLockRegistry(connectionFactory, "leaders"));
        }
        // end::leader-before[]
    }

    static class LeaderAfter {
        // tag::leader-after[]
        @Bean
        Cerberus cerberus() {
            return Cerberus.builder()
                    .engine("redis://redis.internal:6379")
                    .defaultLease(Duration.ofSeconds(2))
                    .build();
        }

        @Bean
        LockRegistryLeaderInitiator leaderInitiator(Cerberus cerberus) {
            return new LockRegistryLeaderInitiator(new CerberusLockRegistry(cerberus, "leaders"));
        }
        // end::leader-after[]
    }

    interface Invoices {
        void save(String invoice, long fencingToken);
    }

    private final List<Long> saved = new ArrayList<>();
    private final Invoices invoices = (invoice, fencingToken) -> saved.add(fencingToken);
    private final String invoice = "invoice 42";

    void fencing(CerberusLockRegistry lockRegistry) {
        // tag::fencing[]
        Lock lock = lockRegistry.obtain("invoice:42");
        lock.lock();
        try {
            invoices.save(invoice, lockRegistry.lease("invoice:42").fencingToken());
        } finally {
            lock.unlock(); // throws ConcurrentModificationException if the lease was lost meanwhile
        }
        // end::fencing[]
    }

    @Test
    void everyExampleOfTheSectionIsCodeOfThisClassVerbatim() throws Exception {
        Map<String, String> examples = examples(
                Files.readString(
                        tree().resolve(
                                        "cerberus-spring-integration/src/test/java/io/cerberus/integration/MigrationExamplesTest.java")));
        assertThat(examples)
                .containsOnlyKeys(
                        "redis-before",
                        "redis-after",
                        "jdbc-before",
                        "jdbc-after",
                        "leader-before",
                        "leader-after",
                        "fencing");
        List<String> blocks = javaBlocks(section(Files.readString(tree().resolve("docs/MIGRATION.md"))));
        examples.forEach((name, code) -> assertThat(blocks)
                .as("the example '%s' as a Java block of \"From Spring Integration\"", name)
                .contains(code));
        assertThat(blocks)
                .as("Java blocks of the section that are no example of this class")
                .allMatch(examples::containsValue);
    }

    @Test
    void theFencingExampleRunsAndPassesTheHoldsToken() {
        try (Cerberus cerberus = Cerberus.connect("mem:migration")) {
            fencing(new CerberusLockRegistry(cerberus));
            fencing(new CerberusLockRegistry(cerberus));
        }
        assertThat(saved).hasSize(2);
        assertThat(saved.get(1)).isGreaterThan(saved.get(0));
    }

    /** @return each tagged region of the source, by name, its indentation removed */
    static Map<String, String> examples(String source) {
        Map<String, String> examples = new LinkedHashMap<>();
        Matcher tag = Pattern.compile(TAG.pattern(), Pattern.DOTALL | Pattern.MULTILINE)
                .matcher(source);
        while (tag.find()) {
            String indent = tag.group(1);
            StringBuilder code = new StringBuilder();
            for (String line : tag.group(3).split("\n", -1)) {
                code.append(line.startsWith(indent) ? line.substring(indent.length()) : line.strip())
                        .append('\n');
            }
            examples.put(tag.group(2), code.toString().stripTrailing() + "\n");
        }
        return examples;
    }

    /** @return the section "## From Spring Integration" of the page, up to the next section */
    static String section(String page) {
        int start = page.indexOf("\n## From Spring Integration\n");
        assertThat(start).as("the section in docs/MIGRATION.md").isNotNegative();
        int end = page.indexOf("\n## ", start + 1);
        return end < 0 ? page.substring(start) : page.substring(start, end);
    }

    static List<String> javaBlocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(markdown);
        while (block.find()) {
            blocks.add(block.group(1));
        }
        return blocks;
    }

    private static Path tree() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docs/MIGRATION.md"))) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "no docs/MIGRATION.md above " + Path.of("").toAbsolutePath());
    }
}
