package io.cerberus.check.log;

import io.cerberus.redis.FencedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;

/**
 * The registers of a run kept in Redis ({@code --register redis}): key {@code cerberus-check:register:NAME} each, on one
 * Lettuce connection shared by the client's loops (it reconnects by itself after a restart).
 */
final class RedisRegisters implements Registers {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final List<RedisRegister> registers;

    RedisRegisters(String uri, List<String> names, boolean fenced) {
        RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(Duration.ofSeconds(2));
        this.client = RedisClient.create(redisUri);
        this.connection = client.connect();
        FencedRedis commands = FencedRedis.of(connection);
        this.registers = names.stream()
                .map(name -> new RedisRegister(
                        commands,
                        connection.sync(),
                        "cerberus-check:register:" + name,
                        fenced ? null : Registers.UNFENCED))
                .toList();
    }

    @Override
    public List<Register> registers() {
        return List.copyOf(registers);
    }

    @Override
    public void reset() {
        registers.forEach(RedisRegister::reset);
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
