/** The servers a check starts and faults, one {@code LockServer} per topology (single, Sentinel, cluster, ensemble, database). */
package io.cerberus.check.servers;
