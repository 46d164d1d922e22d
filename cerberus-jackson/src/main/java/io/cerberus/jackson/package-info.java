/** JSON results for the idempotency guard, through Jackson: {@link io.cerberus.jackson.JacksonCodec}. */
package io.cerberus.jackson;
