package io.cerberus.spi.support;

import java.lang.System.Logger.Level;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Engine URI helpers. */
public final class Redaction {
    private static final System.Logger LOG = System.getLogger(Redaction.class.getName());
    /** A parameter whose name says it carries a secret: any value up to the next separator. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)([?&;](?:[\\w.\\-]*(?:password|passwd|pwd|secret|token|credential|key-?store|key_store)[\\w.\\-]*|pass|auth)=)[^&;#]*");
    /** What follows a user-info: hosts and ports (a list for clusters), up to the path, query or fragment. */
    private static final Pattern HOSTS = Pattern.compile("[\\w.\\-\\[\\]:,%]+");

    private Redaction() {
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
        return uri == null ? "null" : redact(uri, new ArrayList<>());
    }

    /**
     * The secrets {@link #redact} hides, for text that may echo them apart from the URI (a
     * driver's message naming a host it parsed out of a password).
     *
     * @param uri an engine URI
     * @return the password of the user-info (a bare user-info whole), each secret parameter's
     *     value, and their %-decoded forms, longest first
     */
    public static List<String> secrets(String uri) {
        List<String> found = new ArrayList<>();
        if (uri != null) {
            redact(uri, found);
        }
        Set<String> all = new LinkedHashSet<>();
        for (String secret : found) {
            all.add(secret);
            all.add(decoded(secret));
        }
        all.remove("");
        List<String> longestFirst = new ArrayList<>(all);
        longestFirst.sort(Comparator.comparingInt(String::length).reversed());
        return List.copyOf(longestFirst);
    }

    private static String decoded(String part) {
        try {
            return URLDecoder.decode(part, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return part; // not %-encoded text
        }
    }

    private static String redact(String uri, List<String> found) {
        String hidden = redactUserInfo(uri, found);
        Matcher parameters = SECRET_PARAMETER.matcher(hidden);
        StringBuilder shown = new StringBuilder();
        while (parameters.find()) {
            String value = parameters.group().substring(parameters.group(1).length());
            if (!value.isEmpty()) {
                found.add(value);
            }
            parameters.appendReplacement(shown, "$1****");
        }
        return parameters.appendTail(shown).toString();
    }

    private static String redactUserInfo(String uri, List<String> found) {
        int slashes = uri.indexOf("//");
        if (slashes < 0) {
            return uri;
        }
        int start = slashes + 2;
        int end = authorityEnd(uri, start);
        int at = uri.lastIndexOf('@', end - 1);
        if (at < start) {
            at = -1;
        }
        // a password with an unencoded '/', '?' or '#' ends the authority early and may hide a later
        // '@' (also after an '@' of its own): the user-info ends at the last '@' that hosts follow
        for (int i = uri.indexOf('@', Math.max(start, at + 1)); i >= 0; i = uri.indexOf('@', i + 1)) {
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
        String userInfo = uri.substring(start, at);
        int colon = userInfo.indexOf(':');
        found.add(colon < 0 ? userInfo : userInfo.substring(colon + 1)); // a bare user-info is a password to Redis clients
        return uri.substring(0, start) + "****" + uri.substring(at);
    }

    /**
     * Logs a WARNING when an engine sends credentials without TLS to a host that is not this
     * machine's loopback: anyone on the path can read them.
     *
     * @param engine the engine's kind, e.g. {@code redis}
     * @param uri the engine's URI (shown redacted)
     * @param hosts the hosts the credentials go to
     * @return whether it warned
     */
    public static boolean warnIfCredentialsInPlaintext(String engine, String uri, Collection<String> hosts) {
        boolean remote = hosts.stream().anyMatch(host -> !isLoopback(host));
        if (remote) {
            LOG.log(Level.WARNING, engine + " engine " + redact(uri) + " sends its credentials without TLS to " + String.join(", ", hosts)
                    + ": anyone on the network path can read them. Turn TLS on (see the engine's page in the docs)");
        }
        return remote;
    }

    /** @return whether {@code host} (a name or address, maybe with brackets) is this machine's loopback */
    static boolean isLoopback(String host) {
        String bare = host.toLowerCase(Locale.ROOT);
        if (bare.startsWith("[") && bare.endsWith("]")) {
            bare = bare.substring(1, bare.length() - 1);
        }
        return bare.equals("localhost") || bare.startsWith("127.") || bare.equals("::1") || bare.equals("0:0:0:0:0:0:0:1");
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
