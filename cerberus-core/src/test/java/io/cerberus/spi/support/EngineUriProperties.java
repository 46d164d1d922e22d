package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Engine URIs, property-based: for generated users, passwords, hosts, paths and parameters, a
 * parse gives back each part as it was, redaction never shows a password, and a URI that breaks a
 * rule is refused with an {@link IllegalArgumentException} naming it, never another exception.
 */
class EngineUriProperties {
    private static final Set<String> SCHEMES = Set.of("redis", "rediss");
    private static final Set<String> KNOWN = Set.of("timeout", "database", "clientName");

    /** One engine URI's parts, as a user would write them before percent-encoding. */
    record Parts(String user, String password, List<String> hosts, String path, String clientName) {
        String uri() {
            String userInfo = (user.isEmpty() ? "" : encode(user)) + ":" + encode(password) + "@";
            return "redis://" + userInfo + String.join(",", hosts) + path + "?clientName=" + encode(clientName);
        }
    }

    private static String encode(String part) {
        // URLEncoder is form encoding: a space becomes '+', which URIs read as a plus
        return URLEncoder.encode(part, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Provide
    Arbitrary<Parts> parts() {
        Arbitrary<String> users = Arbitraries.strings()
                .alpha()
                .numeric()
                .withChars("._-")
                .ofMinLength(0)
                .ofMaxLength(12);
        Arbitrary<String> passwords = Arbitraries.strings()
                .all()
                .ofMinLength(1)
                .ofMaxLength(24)
                .filter(p -> p.codePoints().noneMatch(c -> Character.getType(c) == Character.SURROGATE));
        Arbitrary<String> host = Combinators.combine(
                        Arbitraries.of("localhost", "127.0.0.1", "[::1]", "cache-1.example.org", "10.0.0.7"),
                        Arbitraries.integers().between(1, 65535))
                .as((name, port) -> name + ":" + port);
        Arbitrary<List<String>> hosts = host.list().ofMinSize(1).ofMaxSize(3);
        Arbitrary<String> paths = Arbitraries.of("", "/", "/0", "/15");
        Arbitrary<String> clientNames = Arbitraries.strings()
                .all()
                .ofMaxLength(16)
                .filter(p -> p.codePoints().noneMatch(c -> Character.getType(c) == Character.SURROGATE));
        return Combinators.combine(users, passwords, hosts, paths, clientNames).as(Parts::new);
    }

    @Property(tries = 500)
    void aParseGivesBackEachPartAsWritten(@ForAll("parts") Parts parts) {
        EngineUri uri = EngineUri.parse(parts.uri(), "redis", SCHEMES, KNOWN);

        assertThat(uri.scheme()).isEqualTo("redis");
        assertThat(uri.user())
                .isEqualTo(parts.user().isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(parts.user()));
        assertThat(uri.password()).contains(parts.password());
        assertThat(uri.hosts()).isEqualTo(parts.hosts());
        assertThat(uri.path()).isEqualTo(parts.path());
        assertThat(uri.parameter("clientName")).contains(parts.clientName());
    }

    @Property(tries = 500)
    void redactionNeverShowsAnEncodedPassword(@ForAll("parts") Parts parts) {
        String uri = parts.uri();
        String encoded = encode(parts.password());

        assertThat(Redaction.redact(uri)).doesNotContain(":" + encoded + "@").startsWith("redis://****@");
        assertThat(EngineUri.parse(uri, "redis", SCHEMES, KNOWN).shown()).isEqualTo(Redaction.redact(uri));
        assertThat(Redaction.secrets(uri)).contains(parts.password());
    }

    /**
     * Passwords as users paste them, not encoded: letters, digits and the characters that end a
     * user-info elsewhere in a URI ({@code / ? # :}) or that a password often holds. Not {@code =}
     * together with {@code ?}: {@code redis://u:p?a=b@host} reads as a query holding an e-mail
     * address, and redaction cannot tell the two apart (docs/dev/MODEL-CHECKING.md).
     */
    @Provide
    Arbitrary<String> rawPasswords() {
        return Arbitraries.strings()
                .withCharRange('a', 'z')
                .withCharRange('A', 'Z')
                .numeric()
                .withChars("/?#:!$*()-_.~@")
                .ofMinLength(6)
                .ofMaxLength(20)
                .map(p -> "Pw" + p);
    }

    @Property(tries = 1000)
    void redactionNeverShowsAPasswordWrittenWithoutEncoding(
            @ForAll("rawPasswords") String password, @ForAll("hostLists") String hosts, @ForAll boolean withUser) {
        String userInfo = withUser ? "app:" + password : password;

        assertThat(Redaction.redact("redis://" + userInfo + "@" + hosts + "/0?timeout=2s"))
                .doesNotContain(password);
    }

    @Property(tries = 500)
    void redactionHidesTheWholeUserInfoAndNothingElse(
            @ForAll("rawPasswords") String password, @ForAll("hostLists") String hosts, @ForAll boolean withUser) {
        String userInfo = withUser ? "app:" + password : password;

        // no query: which parameter values are shown depends on the engines on the class path
        assertThat(Redaction.redact("redis://" + userInfo + "@" + hosts + "/0"))
                .isEqualTo("redis://****@" + hosts + "/0");
    }

    @Provide
    Arbitrary<String> hostLists() {
        return Arbitraries.of("localhost:6379", "10.0.0.7:6380", "[::1]:6379", "a.example.org:7000,b.example.org:7001");
    }

    @Property(tries = 300)
    void aSecretParameterIsHidden(@ForAll("rawPasswords") String secret, @ForAll("secretNames") String name) {
        String uri = "redis://localhost:6379/0?timeout=2s&" + name + "=" + encode(secret);

        assertThat(Redaction.redact(uri)).doesNotContain(encode(secret)).endsWith(name + "=****");
    }

    @Provide
    Arbitrary<String> secretNames() {
        return Arbitraries.of(
                "password",
                "pass",
                "pwd",
                "sslPassword",
                "keyStorePassword",
                "token",
                "authToken",
                "secret",
                "clientSecret",
                "credentials",
                "keystore",
                "trustStorePassword",
                "auth");
    }

    @Property(tries = 1000)
    void anyTextIsParsedOrRefusedWithAnIllegalArgumentException(@ForAll("uriLikeText") String text) {
        Throwable thrown = catchThrowable(() -> EngineUri.parse(text, "redis", SCHEMES, KNOWN));

        if (thrown != null) {
            assertThat(thrown).isExactlyInstanceOf(IllegalArgumentException.class);
            assertThat(thrown.getMessage()).contains("redis");
        }
    }

    /** Text built from the pieces of URIs, so most of it comes near a valid one and breaks one rule. */
    @Provide
    Arbitrary<String> uriLikeText() {
        Arbitrary<String> piece = Arbitraries.oneOf(
                Arbitraries.of(
                        "redis://",
                        "rediss://",
                        "zk://",
                        "redis:",
                        "://",
                        "@",
                        ":",
                        "::",
                        ",",
                        "/",
                        "?",
                        "&",
                        "=",
                        "#",
                        "%",
                        "%2",
                        "%zz",
                        "%41",
                        "+",
                        "[",
                        "]",
                        "localhost",
                        "6379",
                        "99999",
                        "-1",
                        "timeout",
                        "database",
                        "clientName",
                        "unknown",
                        "user",
                        "pass",
                        " "),
                Arbitraries.strings().all().ofMaxLength(3));
        return piece.list().ofMaxSize(12).map(pieces -> String.join("", pieces));
    }

    @Property(tries = 300)
    void anUnknownParameterIsRefusedByName(@ForAll("parameterNames") String name) {
        assertThatThrownBy(() -> EngineUri.parse("redis://localhost:6379?" + name + "=1", "redis", SCHEMES, KNOWN))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter '" + name + "'")
                .hasMessageContaining("known parameters: clientName, database, timeout");
    }

    @Provide
    Arbitrary<String> parameterNames() {
        return Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(10).filter(name -> !KNOWN.contains(name));
    }

    @Property(tries = 300)
    void aParameterGivenTwiceIsRefusedByName(@ForAll("knownNames") String name) {
        assertThatThrownBy(() -> EngineUri.parse(
                        "redis://localhost:6379?" + name + "=1&" + name + "=2", "redis", SCHEMES, KNOWN))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameter '" + name + "' is given twice");
    }

    @Provide
    Arbitrary<String> knownNames() {
        return Arbitraries.of(KNOWN);
    }
}
