package io.cerberus.idempotency;

import java.lang.reflect.Type;

/**
 * Makes JSON result codecs for {@link ResultCodec#json(Class)}. Found with
 * {@link java.util.ServiceLoader}: the {@code cerberus-jackson} module provides one over Jackson;
 * the core has none, as it depends on no JSON library.
 */
public interface JsonCodecProvider {
    /**
     * @param type the result type (a class, or a parameterized type such as {@code List<Order>})
     * @param <T> the result type
     * @return a codec that stores results of this type as JSON
     */
    <T> ResultCodec<T> codec(Type type);
}
