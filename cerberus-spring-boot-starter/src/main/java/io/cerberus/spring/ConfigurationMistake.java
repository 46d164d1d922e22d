package io.cerberus.spring;

/**
 * A configuration that would lose locks if the application started with it: a {@code cerberus.*}
 * property the starter does not have, or no engine at all. Thrown at start-up;
 * {@link ConfigurationMistakeAnalyzer} shows it as Spring Boot shows a failed start.
 */
final class ConfigurationMistake extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String action;

    /**
     * @param message what is wrong and where
     * @param action what to write instead
     */
    ConfigurationMistake(String message, String action) {
        super(message + ". " + action);
        this.action = action;
    }

    /** @return what to write instead */
    String action() {
        return action;
    }
}
