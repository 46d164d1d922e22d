/**
 * The Redis lock engines, served for {@code redis://}, {@code rediss://} and {@code redlock://}
 * URIs once this module is on the class path. Only the providers
 * ({@link io.cerberus.redis.RedisEngineProvider}, {@link io.cerberus.redis.RedlockEngineProvider})
 * are public (for {@link java.util.ServiceLoader}); applications use the engines through
 * {@link io.cerberus.Cerberus#connect(String)}. Key layout and scripts: {@code docs/REDIS.md}.
 */
package io.cerberus.redis;
