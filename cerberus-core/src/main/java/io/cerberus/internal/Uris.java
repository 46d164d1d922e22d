package io.cerberus.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Engine URI helpers. */
public final class Uris {
    /** A parameter whose name says it carries a secret: any value up to the next separator. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)([?&;](?:[\\w.\\-]*(?:password|passwd|pwd|secret|token|credential|key-?store|key_store)[\\w.\\-]*|pass|auth)=)[^&;#]*");
    /** What follows a user-info: hosts and ports (a list for clusters), up to the path, query or fragment. */
    private static final Pattern HOSTS = Pattern.compile("[\\w.\\-\\[\\]:,%]+");

    private Uris() {
    }

    /**
     * Hides every secret an engine URI may carry, for messages, logs, {@code toString}, reports
     * and command lines: the whole user-info ({@code user:password@}, and a bare {@code secret@},
     * which Redis clients read as a password; also when the password holds an unencoded
     * {@code / ? #}), and the value of every parameter whose name says password, secret, token,
     * credential or key store.
     *
     * @param uri an engine URI
     * @return the URI with each of those replaced by {@code ****}
     */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String hidden = redactUserInfo(uri);
        Matcher parameters = SECRET_PARAMETER.matcher(hidden);
        return parameters.replaceAll("$1****");
    }

    private static String redactUserInfo(String uri) {
        int slashes = uri.indexOf("//");
        if (slashes < 0) {
            return uri;
        }
        int start = slashes + 2;
        int end = authorityEnd(uri, start);
        int at = uri.lastIndexOf('@', end - 1);
        if (at < start) {
            // no '@' before the first '/', '?' or '#': a password with an unencoded one of those may hide a later '@'
            at = -1;
            for (int i = uri.indexOf('@', start); i >= 0; i = uri.indexOf('@', i + 1)) {
                String before = uri.substring(start, i);
                if (before.contains("=")) {
                    break; // inside a query: an e-mail address as a value, not a user-info
                }
                int hostsEnd = authorityEnd(uri, i + 1);
                if (hostsEnd > i + 1 && HOSTS.matcher(uri.substring(i + 1, hostsEnd)).matches()) {
                    at = i;
                }
            }
            if (at < 0) {
                return uri;
            }
        }
        return uri.substring(0, start) + "****" + uri.substring(at);
    }

    /** @return the index of the first '/', '?' or '#' at or after {@code from}, or the length */
    private static int authorityEnd(String uri, int from) {
        for (int i = from; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '/' || c == '?' || c == '#') {
                return i;
            }
        }
        return uri.length();
    }
}
