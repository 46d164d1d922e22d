package io.cerberus.spring;

import io.cerberus.spi.support.Redaction;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Finds a multi-host engine URI that Spring's binding split at its commas: a single value given to
 * the list {@code cerberus.engines} (a property, a YAML scalar, the environment variable
 * {@code CERBERUS_ENGINES}) is split at every comma, so {@code zk://a:2181,b:2181/app} binds as
 * {@code zk://a:2181} and {@code b:2181/app}. The second is no engine URI, but the first would
 * connect to one host only; the start fails instead, naming the forms that keep the commas.
 */
final class SplitEngineUris {
    /** The rest of a host list: {@code host:port}, perhaps followed by a path or a query. */
    private static final Pattern HOST_AND_PORT = Pattern.compile("[^:/?#\\s]+:\\d+(?:[/?].*)?");

    private SplitEngineUris() {}

    /**
     * @param engines the bound {@code cerberus.engines}
     * @throws ConfigurationMistake if an element is not an engine URI by itself but the rest of the one before it
     */
    static void check(List<String> engines) {
        List<String> rejoined = new ArrayList<>();
        boolean split = false;
        for (String uri : engines) {
            boolean fragment = !rejoined.isEmpty() && isFragment(uri, rejoined.get(rejoined.size() - 1));
            if (fragment) {
                split = true;
                rejoined.set(rejoined.size() - 1, rejoined.get(rejoined.size() - 1) + "," + uri);
            } else {
                rejoined.add(uri);
            }
        }
        if (!split) {
            return;
        }
        StringBuilder forms = new StringBuilder();
        for (int i = 0; i < rejoined.size(); i++) {
            String shown = Redaction.redact(rejoined.get(i));
            forms.append(i == 0 ? "" : ", ")
                    .append("cerberus.engines[")
                    .append(i)
                    .append("]=")
                    .append(shown);
        }
        throw new ConfigurationMistake(
                "cerberus.engines was split at the commas of a multi-host URI: it bound as "
                        + engines.stream().map(Redaction::redact).toList()
                        + " (Spring splits a single value of a list property at every comma, environment variables"
                        + " included)",
                "Give each engine URI as one element of the list: " + forms
                        + " in properties; a YAML list item (- " + Redaction.redact(rejoined.get(0))
                        + "); or the environment variables CERBERUS_ENGINES_0_, CERBERUS_ENGINES_1_...");
    }

    private static boolean isFragment(String uri, String previous) {
        if (uri == null || previous == null || !previous.contains("://")) {
            return false;
        }
        String value = uri.strip();
        return value.indexOf(':') < 0 || HOST_AND_PORT.matcher(value).matches();
    }
}
