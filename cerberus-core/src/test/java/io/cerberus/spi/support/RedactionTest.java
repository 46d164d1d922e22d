package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RedactionTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "redis://s3cret@127.0.0.1:6379|redis://****@127.0.0.1:6379",
                "redis://app:s3cret@127.0.0.1:6379/0|redis://****@127.0.0.1:6379/0",
                "rediss://app:s3cret@h1:1,h2:2?timeout=5s|rediss://****@h1:1,h2:2?timeout=****",
                "redis-sentinel://:s3cret@h1:26379,h2:26379/mymaster|redis-sentinel://****@h1:26379,h2:26379/mymaster",
                "redlock://s3cret@h1:1,h2:2,h3:3|redlock://****@h1:1,h2:2,h3:3",
                "redis://app:pa/s3cret@127.0.0.1:6379|redis://****@127.0.0.1:6379",
                "redis://app:pa?s3cret#x@127.0.0.1:6379|redis://****@127.0.0.1:6379",
                "redis://app:pa@s3cret/x@127.0.0.1:6379/0|redis://****@127.0.0.1:6379/0",
                "redis://pa@s3cret?x@127.0.0.1:6379|redis://****@127.0.0.1:6379",
                "redis://app:s3cret@127.0.0.1:6379/0?clientName=me@example.com|redis://****@127.0.0.1:6379/0?clientName=****",
                "zk://admin:s3cret@h1:2181,h2:2181/app|zk://****@h1:2181,h2:2181/app",
                "etcd://root:s3cret@[::1]:2379|etcd://****@[::1]:2379",
                "jdbc:postgresql://db:5432/app?user=app&password=s3cret&sslmode=require|jdbc:postgresql://db:5432/app?user=****&password=****&sslmode=****",
                "jdbc:postgresql://db/app?sslpassword=s3cret|jdbc:postgresql://db/app?sslpassword=****",
                "jdbc:mariadb://db/app?keyStorePassword=s3cret&trustStorePassword=s3cret|jdbc:mariadb://db/app?keyStorePassword=****&trustStorePassword=****",
                "jdbc:sqlserver://db;user=app;password=s3cret;encrypt=true|jdbc:sqlserver://db;user=****;password=****;encrypt=****",
                "etcd://h:2379?token=s3cret|etcd://h:2379?token=****",
                "redis://h:6379?AUTH=s3cret|redis://h:6379?AUTH=****",
                "jdbc:postgresql://db/app?user=me@example.com|jdbc:postgresql://db/app?user=****",
                "mem:orders?maxRecords=10&maxRecordz=s3cret|mem:orders?maxRecords=10&maxRecordz=****",
                "redis://h:6379?timeout=1s&s3cret|redis://h:6379?timeout=****&****",
                "redis://h:6379/0#s3cret|redis://h:6379/0#****",
                "file:/var/lib/locks|file:/var/lib/locks",
                "mem:|mem:",
            })
    void everySecretAnEngineUriCarriesIsHidden(String uri, String shown) {
        assertThat(Redaction.redact(uri)).isEqualTo(shown).doesNotContain("s3cret");
    }

    @Test
    void theSecretsAreWhatRedactionHidesAndTheirDecodedForms() {
        assertThat(Redaction.secrets("redis://s3cret@h:1")).containsExactly("s3cret");
        assertThat(Redaction.secrets("redis://app:s%40cret@h:1?timeout=1s")).containsExactly("s%40cret", "s@cret");
        assertThat(Redaction.secrets("jdbc:postgresql://h/db?user=app&password=pw1&sslpassword=longer-pw"))
                .containsExactly("longer-pw", "pw1");
        assertThat(Redaction.secrets("etcd://h:2379/locks?ttl=5"))
                .as("short values not named as secret are not scrubbed")
                .isEmpty();
        assertThat(Redaction.secrets("zk://h/x?pasword=hunter2&user=a")).containsExactly("hunter2");
        assertThat(Redaction.secrets(null)).isEmpty();
    }

    @Test
    void credentialsInPlaintextAreWarnedAboutUnlessTheyStayOnThisMachine() {
        assertThat(Redaction.warnIfCredentialsInPlaintext(
                        "redis", "redis://s3cret@cache.internal:6379", java.util.List.of("cache.internal")))
                .isTrue();
        assertThat(Redaction.warnIfCredentialsInPlaintext(
                        "etcd", "etcd://u:p@127.0.0.1:2379", java.util.List.of("127.0.0.1", "localhost", "[::1]")))
                .isFalse();
        assertThat(Redaction.warnIfCredentialsInPlaintext(
                        "etcd", "etcd://u:p@h", java.util.List.of("127.0.0.1", "10.0.0.7")))
                .isTrue();
    }

    @Test
    void withoutItsEngineOnTheClassPathEveryValueIsHidden() {
        // core serves mem: and file: only: a redis URI's plain parameters are hidden here, shown where cerberus-redis
        // is loaded
        assertThat(Redaction.redact("redis://h?timeout=5s")).isEqualTo("redis://h?timeout=****");
        assertThat(Redaction.redact("mem:x?maxRecords=5&maxRecordBytes=1MB"))
                .isEqualTo("mem:x?maxRecords=5&maxRecordBytes=1MB");
        assertThat(Redaction.redact("mem:x?MAXRECORDS=5"))
                .as("names match whatever their case")
                .isEqualTo("mem:x?MAXRECORDS=5");
    }

    @Test
    void nullIsShownAsNull() {
        assertThat(Redaction.redact(null)).isEqualTo("null");
    }
}
