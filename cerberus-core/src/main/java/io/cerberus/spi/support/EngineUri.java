package io.cerberus.spi.support;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * An engine URI taken apart: {@code scheme://[user[:password]@]host[:port][,host[:port]...][/path][?name=value&...][#fragment]}
 * (a fragment only for an engine that takes one).
 * Parsing refuses what an engine would otherwise misread: an unknown scheme or parameter (named,
 * with the known ones), a parameter given twice, an empty host, a port out of range, a malformed
 * percent-escape, and an unencoded {@code #}, {@code ;} or {@code &} in a value (named as such,
 * never shown). Every message shows the URI {@link Redaction#redact redacted}, never a password.
 * User, password, path, fragment and parameter values are percent-decoded ({@code +} stays a
 * plus); hosts are kept as written.
 */
public final class EngineUri {
    private final String engine;
    private final String scheme;
    private final String shown;
    private final Optional<String> user;
    private final Optional<String> password;
    private final List<String> hosts;
    private final String path;
    private final Optional<String> fragment;
    private final Map<String, String> parameters;

    private EngineUri(
            String engine,
            String scheme,
            String shown,
            Optional<String> user,
            Optional<String> password,
            List<String> hosts,
            String path,
            Optional<String> fragment,
            Map<String, String> parameters) {
        this.engine = engine;
        this.scheme = scheme;
        this.shown = shown;
        this.user = user;
        this.password = password;
        this.hosts = hosts;
        this.path = path;
        this.fragment = fragment;
        this.parameters = parameters;
    }

    /**
     * @param uri the URI as the user gave it
     * @param engine the engine's name, for messages ({@code zk}, {@code etcd})
     * @param schemes the schemes the engine serves, lower case
     * @param known the parameters the engine takes
     * @return the parts
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    public static EngineUri parse(String uri, String engine, Set<String> schemes, Set<String> known) {
        return parse(uri, engine, schemes, known, false);
    }

    /**
     * @param uri the URI as the user gave it
     * @param engine the engine's name, for messages
     * @param schemes the schemes the engine serves, lower case
     * @param known the parameters the engine takes
     * @param takesFragment whether a {@code #fragment} (after the query) is part of the engine's
     *     URIs, as a Sentinel master's name; when false, a {@code #} is refused
     * @return the parts
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    public static EngineUri parse(
            String uri, String engine, Set<String> schemes, Set<String> known, boolean takesFragment) {
        Arguments.notNull(engine + " URI", uri);
        String shown = Redaction.redact(uri);
        int separator = uri.indexOf("://");
        String scheme = separator < 0 ? "" : uri.substring(0, separator).toLowerCase(Locale.ROOT);
        if (!schemes.contains(scheme)) {
            throw new IllegalArgumentException("a " + engine + " URI starts with "
                    + String.join(":// or ", new TreeSet<>(schemes)) + "://, was " + shown);
        }
        String rest = uri.substring(separator + 3);
        int at = rest.lastIndexOf('@', end(rest, 0) - 1);
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            int colon = userInfo.indexOf(':');
            user = Optional.of(decode(colon < 0 ? userInfo : userInfo.substring(0, colon), engine))
                    .filter(u -> !u.isEmpty());
            password = colon < 0 ? Optional.empty() : Optional.of(decode(userInfo.substring(colon + 1), engine));
            rest = rest.substring(at + 1);
        } else if (rest.indexOf('@') >= 0
                && rest.substring(0, rest.indexOf('@')).indexOf('=') < 0) {
            throw new IllegalArgumentException("the user-info of " + engine + " URI " + shown
                    + " holds a '/', '?' or '#':" + " percent-encode it (%2F, %3F, %23)");
        }
        int hostsEnd = end(rest, 0);
        List<String> hosts = new ArrayList<>();
        for (String host : rest.substring(0, hostsEnd).split(",", -1)) {
            if (host.isBlank()) {
                throw new IllegalArgumentException(engine + " URI " + shown + " has an empty host; write " + scheme
                        + "://host1:port1,host2:port2");
            }
            hosts.add(host);
        }
        int fragmentStart = rest.indexOf('#', hostsEnd);
        if (fragmentStart >= 0 && !takesFragment) {
            throw new IllegalArgumentException(engine + " URI " + shown + " holds a '#', which it does not take:"
                    + " a user, password or value holding '#' must be percent-encoded (%23)");
        }
        int end = fragmentStart >= 0 ? fragmentStart : rest.length();
        int queryStart = rest.substring(0, end).indexOf('?', hostsEnd);
        int pathEnd = queryStart >= 0 ? queryStart : end;
        String path = decode(rest.substring(hostsEnd, pathEnd), engine);
        Optional<String> fragment =
                fragmentStart < 0 ? Optional.empty() : Optional.of(decode(rest.substring(fragmentStart + 1), engine));
        Map<String, String> parameters =
                queryStart < 0 ? Map.of() : parameters(rest.substring(queryStart + 1, end), engine, shown, known);
        return new EngineUri(engine, scheme, shown, user, password, List.copyOf(hosts), path, fragment, parameters);
    }

    /**
     * Takes apart an opaque engine URI, {@code scheme:NAME[?name=value&...]} (as {@code mem:orders}),
     * which names a store instead of hosts: {@link #path()} is the name, there are no hosts, no
     * user-info and no fragment.
     *
     * @param uri the URI as the user gave it
     * @param engine the engine's name, for messages
     * @param scheme the scheme the engine serves, lower case
     * @param known the parameters the engine takes
     * @return the parts
     * @throws IllegalArgumentException naming the rule the URI breaks: another scheme, a name with
     *     {@code /} or {@code #}, an unknown or repeated parameter
     */
    public static EngineUri parseOpaque(String uri, String engine, String scheme, Set<String> known) {
        Arguments.notNull(engine + " URI", uri);
        String shown = Redaction.redact(uri);
        int colon = uri.indexOf(':');
        if (colon < 0 || !uri.substring(0, colon).toLowerCase(Locale.ROOT).equals(scheme)) {
            throw new IllegalArgumentException("a " + engine + " URI starts with " + scheme + ":, was " + shown);
        }
        String rest = uri.substring(colon + 1);
        if (rest.startsWith("//")) {
            rest = rest.substring(2);
        }
        int query = rest.indexOf('?');
        String name = decode(query < 0 ? rest : rest.substring(0, query), engine);
        if (name.contains("/") || name.contains("#")) {
            throw new IllegalArgumentException(
                    engine + " URI must be \"" + scheme + ":\" or \"" + scheme + ":NAME\" (a name without '/',"
                            + " '?' or '#'), with parameters after '?', was \"" + shown + "\"");
        }
        Map<String, String> parameters =
                query < 0 ? Map.of() : parameters(rest.substring(query + 1), engine, shown, known);
        return new EngineUri(
                engine,
                scheme,
                shown,
                Optional.empty(),
                Optional.empty(),
                List.of(),
                name,
                Optional.empty(),
                parameters);
    }

    /** @return the parameters of a query, decoded, checked to be known and given once */
    private static Map<String, String> parameters(String query, String engine, String shown, Set<String> known) {
        Map<String, String> parameters = new LinkedHashMap<>();
        if (query.indexOf(';') >= 0) {
            throw new IllegalArgumentException(
                    engine + " URI " + shown + " holds a ';' in its parameters, which separate with '&':"
                            + " a value holding ';' must be percent-encoded (%3B)");
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = equals < 0 ? pair : pair.substring(0, equals);
            if (equals < 0 && !known.contains(name)) {
                // not named: as likely the rest of a value cut at an unencoded '&' as a parameter
                throw new IllegalArgumentException(
                        engine + " URI " + shown + " has a parameter without '=' that is not one it knows:"
                                + " a value holding '&' must be percent-encoded (%26); known parameters: "
                                + (known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known))));
            }
            if (!known.contains(name)) {
                throw new IllegalArgumentException(
                        "unknown parameter '" + name + "' in " + engine + " URI " + shown + "; known parameters: "
                                + (known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known))));
            }
            if (parameters.put(name, equals < 0 ? "" : decode(pair.substring(equals + 1), engine)) != null) {
                throw new IllegalArgumentException(
                        "parameter '" + name + "' is given twice in " + engine + " URI " + shown);
            }
        }
        return parameters;
    }

    /** @return the scheme, lower case */
    public String scheme() {
        return scheme;
    }

    /** @return the URI with its secrets hidden, for messages */
    public String shown() {
        return shown;
    }

    /** @return the user of the user-info, if one is given and not empty */
    public Optional<String> user() {
        return user;
    }

    /** @return the password of the user-info, if one is given */
    public Optional<String> password() {
        return password;
    }

    /** @return the hosts as written ({@code host}, {@code host:port}, {@code [::1]:port}); at least one, none for an opaque URI */
    public List<String> hosts() {
        return hosts;
    }

    /**
     * @param defaultPort the port of a host written without one
     * @return every host as {@code host:port}, the port checked to be 1 to 65535
     * @throws IllegalArgumentException for a port out of range or not a number
     */
    public List<String> hostsWithPorts(int defaultPort) {
        List<String> withPorts = new ArrayList<>();
        for (String host : hosts) {
            int colon = host.lastIndexOf(':');
            if (colon < 0 || host.endsWith("]")) {
                withPorts.add(host + ":" + defaultPort);
                continue;
            }
            String port = host.substring(colon + 1);
            if (!port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException("the port of " + engine + " host '" + host + "' in " + shown
                        + " must be a number from 1 to 65535");
            }
            withPorts.add(host);
        }
        return List.copyOf(withPorts);
    }

    /** @return the path, decoded, from its leading {@code /}; empty if none; the name of an opaque URI */
    public String path() {
        return path;
    }

    /** @return the fragment, decoded, without its {@code #}, for an engine that takes one */
    public Optional<String> fragment() {
        return fragment;
    }

    /**
     * @param name a known parameter
     * @return its decoded value (empty text for a bare {@code ?name}), if given
     */
    public Optional<String> parameter(String name) {
        return Optional.ofNullable(parameters.get(name));
    }

    /**
     * @param name a known parameter
     * @return its value as a positive {@link Durations duration}, if given
     * @throws IllegalArgumentException if it is given and is not one
     */
    public Optional<Duration> duration(String name) {
        return parameter(name)
                .map(value -> Durations.parsePositive("parameter " + name + " of " + engine + " URI " + shown, value));
    }

    /**
     * @param name a known parameter
     * @param min the least value allowed
     * @param max the largest value allowed
     * @return its value as a whole number, if given
     * @throws IllegalArgumentException if it is given and is not a whole number from {@code min} to {@code max}
     */
    public Optional<Long> number(String name, long min, long max) {
        return parameter(name).map(value -> {
            try {
                long n = Long.parseLong(value);
                if (n >= min && n <= max) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("parameter " + name + " of " + engine + " URI " + shown
                    + " must be a whole number from " + min + " to " + max + ", was '" + value + "'");
        });
    }

    /**
     * @param name a known parameter
     * @return its value as a positive number of bytes: a whole number, or one with {@code KB},
     *     {@code MB} or {@code GB} (binary units: {@code 64MB} is 64 × 2^20), if given
     * @throws IllegalArgumentException if it is given and is not one
     */
    public Optional<Long> bytes(String name) {
        return parameter(name).map(value -> {
            String digits = value.trim().toUpperCase(Locale.ROOT);
            int shift = 0;
            for (String unit : List.of("KB", "MB", "GB", "B")) {
                if (digits.endsWith(unit)) {
                    digits =
                            digits.substring(0, digits.length() - unit.length()).trim();
                    shift = unit.equals("B")
                            ? 0
                            : 10 * (1 + List.of("KB", "MB", "GB").indexOf(unit));
                    break;
                }
            }
            try {
                long n = Long.parseLong(digits);
                if (n > 0 && n <= (Long.MAX_VALUE >> shift)) {
                    return n << shift;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("parameter " + name + " of " + engine + " URI " + shown
                    + " must be a positive whole number of bytes, or with KB, MB or GB, was '" + value + "'");
        });
    }

    /**
     * @param name a known parameter
     * @return its value as {@code true} or {@code false}, if given
     * @throws IllegalArgumentException for any other value ({@code yes}, {@code 1}, {@code on} are refused, not read as false)
     */
    public Optional<Boolean> flag(String name) {
        return parameter(name).map(value -> switch (value) {
            case "true" -> true;
            case "false" -> false;
            default ->
                throw new IllegalArgumentException("parameter " + name + " of " + engine + " URI " + shown
                        + " must be true or false, was '" + value + "'");
        });
    }

    /** @return the index of the first '/', '?' or '#' at or after {@code from}, or the length */
    private static int end(String text, int from) {
        for (int i = from; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '/' || c == '?' || c == '#') {
                return i;
            }
        }
        return text.length();
    }

    /** Percent-decoding of URI parts; unlike form decoding, a {@code +} stays a plus. */
    private static String decode(String part, String engine) {
        try {
            return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // the decoder's message may quote a password: not chained
            throw new IllegalArgumentException("a " + engine
                    + " URI has a malformed percent-escape (%XX) in its user, password, path or" + " parameters");
        }
    }
}
