package io.cerberus.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows a {@link ConfigurationMistake} as Spring Boot shows a failed start ("APPLICATION FAILED TO
 * START", a description and an action) instead of a stack trace. Registered in
 * {@code META-INF/spring.factories}.
 */
public class ConfigurationMistakeAnalyzer extends AbstractFailureAnalyzer<ConfigurationMistake> {

    /** For Spring Boot's {@code spring.factories} loading. */
    public ConfigurationMistakeAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ConfigurationMistake cause) {
        String message = cause.getMessage();
        return new FailureAnalysis(
                message.substring(0, message.length() - cause.action().length()).trim(), cause.action(), cause);
    }
}
