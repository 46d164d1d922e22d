/**
 * JSON results for the idempotency guard, through Jackson 3 ({@link io.cerberus.jackson.JacksonCodec})
 * or Jackson 2 ({@link io.cerberus.jackson.Jackson2Codec}); both write the same JSON.
 */
package io.cerberus.jackson;
