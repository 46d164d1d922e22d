/**
 * The Redis lock engine, served for {@code redis://} and {@code rediss://} URIs once this module is
 * on the class path. Only {@link io.cerberus.redis.RedisEngineProvider} is public (for
 * {@link java.util.ServiceLoader}); applications use the engine through
 * {@link io.cerberus.Cerberus#connect(String)}. Key layout and scripts: {@code docs/REDIS.md}.
 */
package io.cerberus.redis;
