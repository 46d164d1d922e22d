package io.cerberus.spring;

import io.cerberus.idempotency.ResultCodec;
import java.lang.reflect.Method;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Makes the JSON codec of {@link Idempotent @Idempotent} results with the application's Jackson:
 * Jackson 3 ({@link ResultJson}) when it is on the class path, as on Spring Boot 4, else Jackson 2
 * ({@link Jackson2ResultJson}), as on Boot 3. Both write the same layout, so stored results survive
 * the move from one to the other. With the application's mapper bean when it has one (Boot's
 * {@code JsonMapper}, or {@code ObjectMapper} on Jackson 2), so its modules and settings apply;
 * else with a mapper of the defaults. Thread-safe.
 */
final class ResultJsons {
    private static final ClassLoader LOADER = ResultJsons.class.getClassLoader();
    private static final boolean JACKSON_3 = ClassUtils.isPresent("tools.jackson.databind.json.JsonMapper", LOADER);
    private static final boolean JACKSON_2 =
            ClassUtils.isPresent("com.fasterxml.jackson.databind.json.JsonMapper", LOADER);

    /** Codecs with the default mapper: for checks at start, which must not create the application's mapper early. */
    static final ResultJsons DEFAULTS = new ResultJsons(null);

    private final BeanFactory beans;
    private volatile Object mapper;

    /** @param beans where the application's mapper is looked up (at the first call), or null for the defaults */
    ResultJsons(BeanFactory beans) {
        this.beans = beans;
    }

    /** @return whether a Jackson is on the class path */
    static boolean available() {
        return JACKSON_3 || JACKSON_2;
    }

    /**
     * @param method the {@code @Idempotent} method whose results are stored
     * @return its codec
     */
    ResultCodec<Object> codec(Method method) {
        if (JACKSON_3) {
            return Jackson3.codec(method, this);
        }
        return Jackson2.codec(method, this);
    }

    /** Loaded only with Jackson 3 on the class path. */
    private static final class Jackson3 {
        static ResultCodec<Object> codec(Method method, ResultJsons json) {
            if (json.beans == null) {
                return new ResultJson(method);
            }
            if (!(json.mapper instanceof tools.jackson.databind.ObjectMapper)) {
                tools.jackson.databind.json.JsonMapper applications = json.beans
                        .getBeanProvider(tools.jackson.databind.json.JsonMapper.class)
                        .getIfUnique();
                json.mapper = applications == null ? null : ResultJson.compatible(applications);
            }
            return json.mapper == null
                    ? new ResultJson(method)
                    : new ResultJson(method, (tools.jackson.databind.ObjectMapper) json.mapper);
        }
    }

    /** Loaded only without Jackson 3, so with Jackson 2. */
    private static final class Jackson2 {
        static ResultCodec<Object> codec(Method method, ResultJsons json) {
            if (json.beans == null) {
                return new Jackson2ResultJson(method);
            }
            if (!(json.mapper instanceof com.fasterxml.jackson.databind.ObjectMapper)) {
                com.fasterxml.jackson.databind.ObjectMapper applications = json.beans
                        .getBeanProvider(com.fasterxml.jackson.databind.ObjectMapper.class)
                        .getIfUnique();
                json.mapper = applications == null ? null : Jackson2ResultJson.compatible(applications);
            }
            return json.mapper == null
                    ? new Jackson2ResultJson(method)
                    : new Jackson2ResultJson(method, (com.fasterxml.jackson.databind.ObjectMapper) json.mapper);
        }
    }
}
