package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No engine shows a secret written where its URI does not expect one: a misspelt parameter name,
 * a value cut by an unencoded '&', ';' or '#'. Each engine lists the parameters whose values are
 * shown; every other value is hidden.
 */
class UriSecretsTest {
    private static final String SECRET = "hunter2pw";

    @ParameterizedTest
    @ValueSource(
            strings = {
                "zk://127.0.0.1:1/x?user=a&pasword=hunter2pw",
                "zk://127.0.0.1:1/x?user=a&password=hun&ter2pw",
                "zk://127.0.0.1:1/x?user=a&password=hun#ter2pw",
                "zk://127.0.0.1:1/x?user=a&password=hun;ter2pw",
                "etcd://127.0.0.1:1/x?ttl=5&passwd=hunter2pw",
                "etcd://u:hun#ter2pw@127.0.0.1:1/x",
                "redis://127.0.0.1:1/0?timeout=1s&pasword=hunter2pw",
                "redis://127.0.0.1:1/0?timeout=1s&hunter2pw",
                "redis://127.0.0.1:1/0?timeout=1s&clientName=hun#ter2pw",
                "redis-sentinel://127.0.0.1:1/mymaster?secret=hunter2pw",
                "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?drift=0.01&authz=hunter2pw",
                "memcached://127.0.0.1:1?tiemout=hunter2pw",
                "mem:x?maxRecord=hunter2pw",
            })
    void aSecretWhereTheUriDoesNotExpectOneIsRefusedWithoutBeingShown(String uri) {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()
                        .close())
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(String.valueOf(e)).doesNotContain("ter2pw"))
                .satisfies(e -> assertThat(e.getCause() == null ? "" : String.valueOf(e.getCause()))
                        .doesNotContain("ter2pw"));
        assertThat(Redaction.redact(uri)).doesNotContain("ter2pw");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "jdbc:postgresql://127.0.0.1:1/db?user=app&pasword=hunter2pw&cerberus.table=t",
                "jdbc:mariadb://127.0.0.1:1/db?user=app&pasword=hunter2pw",
                "jdbc:h2:tcp://127.0.0.1:1/mem:x;PASWORD=hunter2pw",
            })
    void aJdbcConnectErrorShowsNoMisspeltSecret(String uri) {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()
                        .close())
                .satisfies(e -> assertThat(chain(e)).doesNotContain(SECRET));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "redis://h:6379/0?timeout=5s&clientName=app|redis://h:6379/0?timeout=5s&clientName=app",
                "redlock://h1,h2,h3?drift=0.01|redlock://h1,h2,h3?drift=0.01",
                "zk://h/x?sessionTimeout=10s&user=app&password=pw|zk://h/x?sessionTimeout=10s&user=app&password=****",
                "etcd://u:pw@h/x?ttl=5&tls=true|etcd://****@h/x?ttl=5&tls=true",
                "memcached://h?timeout=1s|memcached://h?timeout=1s",
                "redis-sentinel://:pw@h1:26379,h2:26379?timeout=1s#mymaster|redis-sentinel://****@h1:26379,h2:26379?timeout=1s#mymaster",
                "redis://h:6379/0#pw|redis://h:6379/0#****",
                "jdbc:postgresql://h/db?user=app&password=pw&sslmode=require&cerberus.mode=session"
                        + "|jdbc:postgresql://h/db?user=app&password=****&sslmode=require&cerberus.mode=session",
                "jdbc:h2:tcp://h/mem:x;MODE=PostgreSQL;PASSWORD=pw|jdbc:h2:tcp://h/mem:x;MODE=PostgreSQL;PASSWORD=****",
            })
    void theParametersAnEngineListsAsPlainAreShown(String uri, String shown) {
        assertThat(Redaction.redact(uri)).isEqualTo(shown);
    }

    private static String chain(Throwable error) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = error; t != null; t = t.getCause()) {
            all.append(t).append('\n');
            for (Throwable suppressed : t.getSuppressed()) {
                all.append(chain(suppressed));
            }
        }
        return all.toString();
    }
}
