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
import java.util.regex.Pattern;

/** Engine URI helpers. */
public final class Redaction {
    private static final System.Logger LOG = System.getLogger(Redaction.class.getName());
    /** A parameter name that says it carries a secret, hidden even if an engine lists it as plain. */
    private static final Pattern SECRET_NAME = Pattern.compile(
            "(?i)[\\w.\\-]*(?:password|passwd|pwd|secret|token|credential|key-?store|key_store)[\\w.\\-]*|pass|auth");
    /** The shortest hidden value, of a parameter not named as secret, that {@link #secrets} lists. */
    private static final int MIN_UNNAMED_SECRET = 4;
    /** What follows a user-info: hosts and ports (a list for clusters), up to the path, query or fragment. */
    private static final Pattern HOSTS = Pattern.compile("[\\w.\\-\\[\\]:,%]+");

    private Redaction() {}

    /**
     * Hides every secret an engine URI may carry, for messages, logs, {@code toString}, reports
     * and command lines: the whole user-info ({@code user:password@}, and a bare {@code secret@},
     * which Redis clients read as a password; also when the password holds an unencoded
     * {@code / ? #}); the value of every parameter (after {@code ?}, {@code &} or {@code ;}) but
     * those the scheme's engine lists as {@linkplain io.cerberus.spi.EngineProvider#plainParameters
     * plain}, so a misspelt {@code pasword=...} is hidden too, and never one whose name says
     * password, secret, token, credential or key store; a parameter without {@code =} that is not
     * plain (the rest of a value cut at an unencoded {@code &} or {@code ;}) whole; and the
     * fragment (the rest of a value cut at an unencoded {@code #}) unless the engine names it
     * {@linkplain io.cerberus.spi.EngineProvider#plainFragment plain}. With no engine for the scheme
     * on the class path, every value is hidden.
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
     * @return the password of the user-info (a bare user-info whole), each hidden value (of a
     *     parameter not named as secret, only from 4 characters), and their %-decoded forms,
     *     longest first
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
        int colon = hidden.indexOf(':');
        String scheme = colon < 0 ? "" : hidden.substring(0, colon).toLowerCase(Locale.ROOT);
        Set<String> plain = scheme.isEmpty() ? Set.of() : EngineProviders.plainParameters(scheme);
        int fragment = hidden.indexOf('#', colon + 1);
        String beforeFragment = fragment < 0 ? hidden : hidden.substring(0, fragment);
        int query = firstOf(beforeFragment, "?;", colon + 1);
        StringBuilder shown = new StringBuilder(query < 0 ? beforeFragment : beforeFragment.substring(0, query));
        if (query >= 0) {
            int start = query;
            while (start < beforeFragment.length()) {
                int end = firstOf(beforeFragment, "&;", start + 1);
                end = end < 0 ? beforeFragment.length() : end;
                shown.append(beforeFragment.charAt(start))
                        .append(parameter(beforeFragment.substring(start + 1, end), plain, found));
                start = end;
            }
        }
        if (fragment >= 0) {
            String value = hidden.substring(fragment + 1);
            if (!scheme.isEmpty() && EngineProviders.plainFragment(scheme)) {
                shown.append('#').append(value);
            } else {
                shown.append('#').append(value.isEmpty() ? "" : "****");
                remember(value, false, found);
            }
        }
        return shown.toString();
    }

    /** @return a {@code name=value} (or a bare {@code name}) as shown: the value hidden unless the name is plain */
    private static String parameter(String pair, Set<String> plain, List<String> found) {
        int equals = pair.indexOf('=');
        String name = equals < 0 ? pair : pair.substring(0, equals);
        boolean shown = plain.contains(name.toLowerCase(Locale.ROOT))
                && !SECRET_NAME.matcher(name).matches();
        if (equals < 0) {
            if (shown || pair.isEmpty()) {
                return pair;
            }
            remember(
                    pair, false,
                    found); // no '=': as likely the rest of a value cut at an unencoded '&' or ';' as a name
            return "****";
        }
        String value = pair.substring(equals + 1);
        if (shown || value.isEmpty()) {
            return pair;
        }
        remember(value, SECRET_NAME.matcher(name).matches(), found);
        return name + "=****";
    }

    /**
     * Keeps a hidden value for {@link #secrets}: always when its name says secret, otherwise when it
     * is long enough to be one, so that scrubbing a message for an unknown {@code x=1} does not
     * blank every digit 1 in it.
     */
    private static void remember(String value, boolean namedSecret, List<String> found) {
        if (namedSecret || value.length() >= MIN_UNNAMED_SECRET) {
            found.add(value);
        }
    }

    /** @return the index of the first of {@code chars} at or after {@code from}, or -1 */
    private static int firstOf(String text, String chars, int from) {
        for (int i = from; i < text.length(); i++) {
            if (chars.indexOf(text.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
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
            if (hostsEnd > i + 1
                    && HOSTS.matcher(uri.substring(i + 1, hostsEnd)).matches()) {
                at = i;
            }
        }
        if (at < 0) {
            return uri;
        }
        String userInfo = uri.substring(start, at);
        int colon = userInfo.indexOf(':');
        found.add(
                colon < 0
                        ? userInfo
                        : userInfo.substring(colon + 1)); // a bare user-info is a password to Redis clients
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
            LOG.log(
                    Level.WARNING,
                    engine + " engine " + redact(uri) + " sends its credentials without TLS to "
                            + String.join(", ", hosts)
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
        return bare.equals("localhost")
                || bare.startsWith("127.")
                || bare.equals("::1")
                || bare.equals("0:0:0:0:0:0:0:1");
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
