package io.cerberus.internal;

import java.time.Duration;

/**
 * Settings of one client, checked by the builder.
 *
 * @param namespace the namespace of every lock name
 * @param defaultLease the lease of locks taken without an explicit one
 * @param connectTimeout how long an engine may take to connect or to answer
 */
public record ClientSettings(String namespace, Duration defaultLease, Duration connectTimeout) {
}
