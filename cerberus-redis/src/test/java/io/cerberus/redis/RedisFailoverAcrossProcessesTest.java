package io.cerberus.redis;

import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.AbstractFailoverAcrossProcessesTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failover across processes from a real redis-server, killed and restarted empty (no persistence),
 * to a {@code file:} standby. The restarted server's fencing tokens still exceed those it gave
 * before the kill (a missing fence counter starts at the server's clock), so the fenced counter
 * accepts the writes after the fail-back.
 */
class RedisFailoverAcrossProcessesTest extends AbstractFailoverAcrossProcessesTest {
    @TempDir
    Path dir;

    private RedisServer redis;

    @BeforeEach
    void startServers() throws IOException {
        Files.createDirectories(dir.resolve("standby"));
        redis = RedisServer.start();
    }

    @AfterEach
    void stopServers() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected String primaryUri() {
        return redis.uri();
    }

    @Override
    protected void killPrimary() {
        redis.kill();
    }

    @Override
    protected void restartPrimary() {
        redis.restart();
    }

    @Override
    protected String standbyUri() {
        return "file:" + dir.resolve("standby");
    }
}
