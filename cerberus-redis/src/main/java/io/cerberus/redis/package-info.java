/**
 * The Redis lock engines, served for {@code redis://}, {@code rediss://} and {@code redlock://}
 * URIs once this module is on the class path. Only the providers
 * ({@link io.cerberus.redis.RedisEngineProvider}, {@link io.cerberus.redis.RedlockEngineProvider})
 * are public (for {@link java.util.ServiceLoader}); applications use the engines through
 * {@link io.cerberus.Cerberus#connect(String)}. Key layout and scripts: {@code docs/REDIS.md}.
 *
 * <p>Also public, for the application's own data in Redis protected by a lock on any engine:
 * {@link io.cerberus.redis.FencedRedis} (fenced writes and reads) and the refusal it throws,
 * {@link io.cerberus.fencing.StaleFenceException}.
 */
package io.cerberus.redis;
