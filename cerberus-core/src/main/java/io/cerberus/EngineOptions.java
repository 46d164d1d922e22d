package io.cerberus;

/**
 * Settings of one engine that do not belong in its URI: key material, passwords kept out of
 * configuration strings, tuning. Each engine module defines its own options class (for example
 * {@code io.cerberus.redis.RedisOptions}); pass them with
 * {@link CerberusBuilder#engine(String, String, EngineOptions...)}. An engine given options it
 * does not know refuses them with {@link IllegalArgumentException} when the client is built, so a
 * setting never goes silently unused.
 */
public interface EngineOptions {}
