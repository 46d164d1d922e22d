package io.cerberus.internal;

import java.util.regex.Pattern;

/** Engine URI helpers. */
public final class Uris {
    private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/@:?#]*):[^@/?#]*@");
    private static final Pattern QUERY_PASSWORD = Pattern.compile("(?i)([?&;](?:password|pass|pwd|secret)=)[^&;#]*");

    private Uris() {
    }

    /**
     * @param uri an engine URI
     * @return the URI with any password replaced by {@code ****}, safe for messages and logs
     */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String s = USER_INFO_PASSWORD.matcher(uri).replaceAll("$1:****@");
        return QUERY_PASSWORD.matcher(s).replaceAll("$1****");
    }
}
