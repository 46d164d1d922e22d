/**
 * The engines that need no server: {@code mem:} (one JVM; the reference implementation of the
 * SPI) and {@code file:DIR} (processes on one machine, through operating-system file locks).
 * Not API: use them through {@link io.cerberus.Cerberus#connect(String)}.
 */
package io.cerberus.local;
