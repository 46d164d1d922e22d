/** Fault injection: what is injected when, on which client or server, and the per-client fault proxies. */
package io.cerberus.check.fault;
