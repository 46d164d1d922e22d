package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Fence;
import io.cerberus.servers.RespQuery;
import io.cerberus.testkit.JavaSources;
import io.cerberus.testkit.ReadmeExamples;
import io.cerberus.testkit.ServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The "Redis keys" section of the fencing page does what it says on a real redis-server: its Java example runs
 * (with the test server for both URIs) and its ACL line is enough for every fenced call.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencedRedisDocsTest {
    @RegisterExtension
    static final ServerExtension<RedisWithAdmin> SERVER = ServerExtension.perClass(RedisWithAdmin::start);

    /** @return the Redis keys section of docs/FENCING.md */
    private static String section() throws IOException {
        String page = Files.readString(ReadmeExamples.readme().orElseThrow().resolveSibling("docs/FENCING.md"));
        int start = page.indexOf("## Redis keys\n");
        assertThat(start).as("the Redis keys section").isNotNegative();
        int end = page.indexOf("\n## ", start + 1);
        return end < 0 ? page.substring(start) : page.substring(start, end);
    }

    @Test
    void theJavaExampleRuns() throws Exception {
        List<String> blocks = JavaSources.javaBlocks(section());
        assertThat(blocks).as("a Java example").isNotEmpty();
        String example = blocks.get(0)
                .replace("redis://127.0.0.1:6379", SERVER.uri())
                .replace("zk://127.0.0.1:2181", SERVER.uri());
        String source = """
                package docs;

                import io.cerberus.Cerberus;
                import io.cerberus.Fence;
                import io.cerberus.Lease;
                import io.cerberus.redis.FencedRedis;
                import io.cerberus.fencing.StaleFenceException;
                import io.lettuce.core.RedisClient;
                import io.lettuce.core.api.StatefulRedisConnection;
                import java.time.Duration;

                public class FencedRedisExample {
                    public static void run() throws Exception {
                %s
                    }
                }
                """.formatted(example);
        Class<?> compiled = JavaSources.compile("docs.FencedRedisExample", source, "the Redis keys example");
        compiled.getMethod("run").invoke(null);
        compiled.getMethod("run").invoke(null);

        assertThat(SERVER.get().admin().hget("account:{42}", "balance")).isEqualTo("200");
        assertThat(SERVER.get().admin().get(FencedRedis.fenceKey("account:{42}")))
                .startsWith("0:");
    }

    @Test
    void theAclLineAllowsEveryFencedCall() throws Exception {
        List<String> acl = new ArrayList<>();
        for (String line : section().split("\n")) {
            if (line.startsWith("ACL SETUSER billing ")) {
                for (String word : line.split(" ")) {
                    acl.add(word.replace("PASSWORD", "billing-secret"));
                }
            }
        }
        assertThat(acl).as("one ACL line").isNotEmpty();
        assertThat(RespQuery.send(SERVER.get().port(), acl.toArray(String[]::new)))
                .containsExactly("OK");
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(SERVER.get().port())
                .withAuthentication("billing", "billing-secret")
                .build());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            FencedRedis fenced = FencedRedis.of(connection);
            Fence fence = new Fence(0, 1);
            fenced.set(fence, "account:acl", "1");
            assertThat(fenced.get(fence, "account:acl")).contains("1");
            fenced.keepingFencesFor(java.time.Duration.ofHours(1)).del(fence, "account:acl");
            fenced.hset(fence, "account:acl:h", "f", "v");
            assertThat(fenced.hget(fence, "account:acl:h", "f")).contains("v");
            assertThat(fenced.fence("account:acl:h")).contains(fence);
        } finally {
            client.shutdown();
            RespQuery.send(SERVER.get().port(), "ACL", "DELUSER", "billing");
        }
    }
}
