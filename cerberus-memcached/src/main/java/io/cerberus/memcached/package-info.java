/**
 * The {@code memcached://} lock engine on xmemcached, built on the simple key-value tier
 * ({@link io.cerberus.spi.support.KeyValueEngine}). Found through {@link java.util.ServiceLoader}:
 * putting this module on the class path is all it takes; {@link io.cerberus.memcached.MemcachedEngineProvider}
 * is public only for that. Every other class here is internal, not API. See {@code docs/MEMCACHED.md}.
 */
package io.cerberus.memcached;
