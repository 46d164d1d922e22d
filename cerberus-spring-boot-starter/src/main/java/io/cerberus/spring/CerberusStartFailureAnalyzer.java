package io.cerberus.spring;

import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Shows why the Cerberus client stopped the application's start as Spring Boot shows a failed
 * start ("APPLICATION FAILED TO START", a description and an action) instead of a stack trace: an
 * engine that cannot be reached or refused the URI's credentials, a server set up in a way that
 * breaks a guarantee (a Redis eviction policy), or a setting the client refused. The engines'
 * messages name the URI without its password. Registered in {@code META-INF/spring.factories}.
 */
public class CerberusStartFailureAnalyzer implements FailureAnalyzer {
    private static final String CLIENT_BEAN = "cerberus";

    static final String UNAVAILABLE_ACTION = "Check that the engine runs and can be reached from this host, and its"
            + " URI in cerberus.engines: scheme, host, port, user and password. The start waits up to"
            + " cerberus.connect-timeout (10s unless set) for each engine";
    static final String UNSAFE_ACTION =
            "Change the server's setting as the description says, or accept the risk with the engine URI's opt-in"
                    + " parameter it names (the engine's page in the Cerberus docs explains the trade)";
    static final String REFUSED_ACTION = "Correct the cerberus.* property the description names (SPRING.md lists"
            + " each property with its unit, range and default), or the parameter of the engine URI it names";

    /** For Spring Boot's {@code spring.factories} loading. */
    public CerberusStartFailureAnalyzer() {}

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        EngineUnavailableException unavailable = find(failure, EngineUnavailableException.class);
        if (unavailable != null) {
            return new FailureAnalysis(
                    "A Cerberus engine could not be used at start-up: " + unavailable.getMessage(),
                    UNAVAILABLE_ACTION,
                    unavailable);
        }
        UnsafeEngineException unsafe = find(failure, UnsafeEngineException.class);
        if (unsafe != null) {
            return new FailureAnalysis(
                    "A Cerberus engine's server is set up in a way that breaks a lock guarantee: "
                            + unsafe.getMessage(),
                    UNSAFE_ACTION,
                    unsafe);
        }
        IllegalArgumentException refused = refusedSetting(failure);
        if (refused != null) {
            return new FailureAnalysis(
                    "The Cerberus client refused its configuration: " + refused.getMessage(), REFUSED_ACTION, refused);
        }
        return null;
    }

    /**
     * @return the {@link IllegalArgumentException} that making the client bean threw (a setting out of range, an
     *     engine URI that does not parse or whose module is missing), not a {@link ConfigurationMistake}, which
     *     {@link ConfigurationMistakeAnalyzer} shows
     */
    private static IllegalArgumentException refusedSetting(Throwable failure) {
        boolean inClient = false;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof BeanCreationException creation && CLIENT_BEAN.equals(creation.getBeanName())) {
                inClient = true;
            }
            if (inClient && t instanceof IllegalArgumentException refused && !(t instanceof ConfigurationMistake)) {
                return refused;
            }
        }
        return null;
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
