package io.cerberus.jackson;

import io.cerberus.idempotency.JsonCodecProvider;
import io.cerberus.idempotency.ResultCodec;
import java.lang.reflect.Type;

/**
 * Gives {@link ResultCodec#json(Class)} its Jackson codecs (found through the service loader):
 * {@link JacksonCodec} when Jackson 3 is on the class path, else {@link Jackson2Codec}. Both write
 * the same JSON, so records stay readable when an application moves from one to the other.
 */
public final class JacksonCodecProvider implements JsonCodecProvider {
    private static final boolean JACKSON_3 = present("tools.jackson.databind.json.JsonMapper");
    private static final boolean JACKSON_2 = present("com.fasterxml.jackson.databind.json.JsonMapper");

    @Override
    public <T> ResultCodec<T> codec(Type type) {
        if (JACKSON_3) {
            return JacksonCodec.forType(type);
        }
        if (JACKSON_2) {
            return Jackson2Codec.forType(type);
        }
        throw new IllegalStateException(
                "cerberus-jackson needs Jackson on the class path: add tools.jackson.core:jackson-databind"
                        + " (Jackson 3) or com.fasterxml.jackson.core:jackson-databind (Jackson 2)");
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, JacksonCodecProvider.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
