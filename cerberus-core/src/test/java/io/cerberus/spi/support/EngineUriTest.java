package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EngineUriTest {
    private static EngineUri parse(String uri) {
        return EngineUri.parse(uri, "kv", Set.of("kv", "kvs"), Set.of("timeout", "size", "tls", "name"));
    }

    @Test
    void takesTheUriApart() {
        EngineUri uri = parse("KV://app:s%40cret+x@h1:1,[::1]:2,h3/some/path?timeout=250ms&size=7&tls=true&name=a%20b");
        assertThat(uri.scheme()).isEqualTo("kv");
        assertThat(uri.user()).contains("app");
        assertThat(uri.password()).contains("s@cret+x");
        assertThat(uri.hosts()).containsExactly("h1:1", "[::1]:2", "h3");
        assertThat(uri.hostsWithPorts(9)).containsExactly("h1:1", "[::1]:2", "h3:9");
        assertThat(uri.path()).isEqualTo("/some/path");
        assertThat(uri.duration("timeout")).contains(Duration.ofMillis(250));
        assertThat(uri.number("size", 1, 10)).contains(7L);
        assertThat(uri.flag("tls")).contains(true);
        assertThat(uri.parameter("name")).contains("a b");
        assertThat(uri.shown()).doesNotContain("cret").contains("****");
        EngineUri bare = parse("kvs://h");
        assertThat(bare.user()).isEmpty();
        assertThat(bare.password()).isEmpty();
        assertThat(bare.path()).isEmpty();
        assertThat(bare.duration("timeout")).isEmpty();
    }

    @Test
    void refusesWhatAnEngineWouldMisreadNamingTheRuleAndNeverThePassword() {
        assertThatThrownBy(() -> parse("redis://h")).hasMessageContaining("starts with kv:// or kvs://");
        assertThatThrownBy(() -> parse("kv://u:pw@h?tiemout=1s"))
                .hasMessageContaining("unknown parameter 'tiemout'")
                .hasMessageContaining("known parameters: name, size, timeout, tls")
                .hasMessageNotContaining("pw");
        assertThatThrownBy(() -> parse("kv://h?size=1&size=2")).hasMessageContaining("'size' is given twice");
        assertThatThrownBy(() -> parse("kv://h1,,h2")).hasMessageContaining("empty host");
        assertThatThrownBy(() -> parse("kv://h:0").hostsWithPorts(1)).hasMessageContaining("1 to 65535");
        assertThatThrownBy(() -> parse("kv://h:x").hostsWithPorts(1)).hasMessageContaining("1 to 65535");
        assertThatThrownBy(() -> parse("kv://h?timeout=10").duration("timeout"))
                .hasMessageContaining("whole number with a unit");
        assertThatThrownBy(() -> parse("kv://h?timeout=0s").duration("timeout")).hasMessageContaining("positive");
        assertThatThrownBy(() -> parse("kv://h?size=11").number("size", 1, 10)).hasMessageContaining("from 1 to 10");
        for (String loose : new String[] {"1", "yes", "on", "TRUE", ""}) {
            assertThatThrownBy(() -> parse("kv://h?tls=" + loose).flag("tls"))
                    .as(loose)
                    .hasMessageContaining("must be true or false");
        }
        assertThatThrownBy(() -> parse("kv://u:p/w@h"))
                .hasMessageContaining("percent-encode")
                .hasMessageNotContaining("p/w");
        assertThatThrownBy(() -> parse("kv://u:%zz@h"))
                .hasMessageContaining("percent-escape")
                .hasMessageNotContaining("%zz");
    }

    @Test
    void aValueThatBreaksTheSyntaxIsNamedAsSuchAndNeverShown() {
        Set<String> zk = Set.of("user", "password", "sessionTimeout");
        // an unencoded '&' in a password leaves its tail as a parameter without '='
        assertThatThrownBy(() -> EngineUri.parse("zk://h/x?user=a&password=hun&ter2", "zk", Set.of("zk"), zk))
                .hasMessageContaining("without '='")
                .hasMessageContaining("%26")
                .hasMessageNotContaining("hun")
                .hasMessageNotContaining("ter2");
        assertThatThrownBy(() -> EngineUri.parse("zk://h/x?user=a&password=hun#ter2", "zk", Set.of("zk"), zk))
                .hasMessageContaining("'#'")
                .hasMessageContaining("%23")
                .hasMessageNotContaining("hun")
                .hasMessageNotContaining("ter2");
        assertThatThrownBy(() -> EngineUri.parse("zk://h/x?user=a&password=hun;ter2", "zk", Set.of("zk"), zk))
                .hasMessageContaining("';'")
                .hasMessageContaining("%3B")
                .hasMessageNotContaining("hun")
                .hasMessageNotContaining("ter2");
        assertThatThrownBy(() -> EngineUri.parse("kv://a:pw#rest@h", "kv", Set.of("kv"), Set.of()))
                .hasMessageNotContaining("pw")
                .hasMessageNotContaining("rest");
        // an engine that takes a fragment gets it, after the query
        EngineUri sentinel = EngineUri.parse("s://h1,h2?size=1#master", "s", Set.of("s"), Set.of("size"), true);
        assertThat(sentinel.fragment()).contains("master");
        assertThat(sentinel.number("size", 1, 2)).contains(1L);
        // a misspelt name is named, its value is not
        assertThatThrownBy(() -> EngineUri.parse("zk://h/x?user=a&pasword=hunter2", "zk", Set.of("zk"), zk))
                .hasMessageContaining("unknown parameter 'pasword'")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> EngineUri.parseOpaque("mem:x?sise=hunter2", "mem:", "mem", Set.of("size")))
                .hasMessageContaining("unknown parameter 'sise'")
                .hasMessageNotContaining("hunter2");
        // encoded, each is taken as part of the value
        assertThat(EngineUri.parse("zk://h/x?password=a%26b%23c%3Bd", "zk", Set.of("zk"), zk)
                        .parameter("password"))
                .contains("a&b#c;d");
    }

    @Test
    void anOpaqueUriNamesAStoreAndTakesTheSameParameters() {
        EngineUri uri = EngineUri.parseOpaque("mem:orders?size=64MB", "mem:", "mem", Set.of("size", "count"));
        assertThat(uri.path()).isEqualTo("orders");
        assertThat(uri.hosts()).isEmpty();
        assertThat(uri.bytes("size")).contains(64L << 20);
        assertThat(EngineUri.parseOpaque("mem:", "mem:", "mem", Set.of()).path())
                .isEmpty();
        assertThat(EngineUri.parseOpaque("mem://x", "mem:", "mem", Set.of()).path())
                .isEqualTo("x");
        assertThat(EngineUri.parseOpaque("mem:x?size=12", "mem:", "mem", Set.of("size"))
                        .bytes("size"))
                .contains(12L);
        assertThat(EngineUri.parseOpaque("mem:x?size=3kb", "mem:", "mem", Set.of("size"))
                        .bytes("size"))
                .contains(3072L);

        assertThatThrownBy(() -> EngineUri.parseOpaque("file:x", "mem:", "mem", Set.of()))
                .hasMessageContaining("starts with mem:");
        assertThatThrownBy(() -> EngineUri.parseOpaque("mem:a/b", "mem:", "mem", Set.of()))
                .hasMessageContaining("a name without '/'");
        assertThatThrownBy(() -> EngineUri.parseOpaque("mem:x?sise=1", "mem:", "mem", Set.of("size")))
                .hasMessageContaining("unknown parameter 'sise'")
                .hasMessageContaining("known parameters: size");
        assertThatThrownBy(() -> EngineUri.parseOpaque("mem:x?size=1&size=2", "mem:", "mem", Set.of("size")))
                .hasMessageContaining("given twice");
        for (String bad : new String[] {"0", "-1", "1TB", "MB", "1.5MB", ""}) {
            assertThatThrownBy(() -> EngineUri.parseOpaque("mem:x?size=" + bad, "mem:", "mem", Set.of("size"))
                            .bytes("size"))
                    .as(bad)
                    .hasMessageContaining("positive whole number of bytes, or with KB, MB or GB");
        }
    }
}
