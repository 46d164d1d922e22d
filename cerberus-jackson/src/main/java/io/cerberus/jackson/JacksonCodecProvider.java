package io.cerberus.jackson;

import io.cerberus.idempotency.ResultCodec;
import io.cerberus.spi.JsonCodecProvider;
import java.lang.reflect.Type;

/** Gives {@link ResultCodec#json(Class)} its Jackson codecs (found through the service loader). */
public final class JacksonCodecProvider implements JsonCodecProvider {
    @Override
    public <T> ResultCodec<T> codec(Type type) {
        return JacksonCodec.forType(type);
    }
}
