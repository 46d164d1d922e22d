/**
 * Spring Boot support: {@link io.cerberus.spring.CerberusAutoConfiguration} builds a
 * {@link io.cerberus.Cerberus} client from the {@code cerberus.*} properties
 * ({@link io.cerberus.spring.CerberusProperties}); {@link io.cerberus.spring.WithDistributedLock} and
 * {@link io.cerberus.spring.Idempotent} guard methods with a lock or the idempotency guard.
 */
package io.cerberus.spring;
