/**
 * The {@code etcd://} lock engine on jetcd. Found through {@link java.util.ServiceLoader}: putting
 * this module on the class path is all it takes; {@link io.cerberus.etcd.EtcdEngineProvider} is
 * public only for that. Every other class here is internal, not API. See {@code docs/ETCD.md}.
 */
package io.cerberus.etcd;
