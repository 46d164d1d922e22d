package io.cerberus.internal;

import io.cerberus.CerberusMetrics;
import io.cerberus.FailoverPolicy;
import java.time.Duration;

/**
 * Settings of one client, checked by the builder.
 *
 * @param namespace the namespace of every lock name
 * @param defaultLease the lease of locks taken without an explicit one
 * @param connectTimeout how long an engine may take to connect or to answer
 * @param lockDelay how long after a switch new acquisitions are also taken on the old engine;
 *     null for the longest lease granted there (at least the default lease)
 * @param failover the automatic failover policy, null for none
 * @param metrics where to report what the client does, null for what the class path offers
 */
public record ClientSettings(
        String namespace,
        Duration defaultLease,
        Duration connectTimeout,
        Duration lockDelay,
        FailoverPolicy failover,
        CerberusMetrics metrics) {

    /** Settings of a client without lock-delay override or failover. */
    public ClientSettings(String namespace, Duration defaultLease, Duration connectTimeout) {
        this(namespace, defaultLease, connectTimeout, null, null, null);
    }
}
