/**
 * ShedLock on Cerberus: {@link io.cerberus.shedlock.CerberusLockProvider} is a ShedLock lock provider
 * whose locks are Cerberus leases, on any engine.
 */
package io.cerberus.shedlock;
