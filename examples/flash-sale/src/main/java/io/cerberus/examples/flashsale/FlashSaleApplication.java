package io.cerberus.examples.flashsale;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A flash sale: a small stock in Redis, many buyers at once, several instances of this service
 * behind a load balancer. See the README of this example for how to run and load it.
 */
@SpringBootApplication
public class FlashSaleApplication {

    /**
     * @param args Spring Boot arguments, e.g. {@code --server.port=8081}
     */
    public static void main(String[] args) {
        SpringApplication.run(FlashSaleApplication.class, args);
    }

    /**
     * @param uri where the stock lives ({@code flash-sale.redis-uri})
     * @return the Redis client of the shop's data (Cerberus has its own connection, from {@code cerberus.engines})
     */
    @Bean(destroyMethod = "shutdown")
    RedisClient shopRedisClient(@Value("${flash-sale.redis-uri}") String uri) {
        return RedisClient.create(uri);
    }

    /**
     * @param client the shop's Redis client
     * @return one connection shared by all requests (Lettuce connections are thread-safe)
     */
    @Bean(destroyMethod = "close")
    StatefulRedisConnection<String, String> shopRedis(RedisClient client) {
        return client.connect();
    }
}
