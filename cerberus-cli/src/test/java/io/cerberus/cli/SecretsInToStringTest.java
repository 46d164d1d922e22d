package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.SecretsInToString;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every type of core, the engines and the command line that holds a URI or credential prints without its secret. */
class SecretsInToStringTest {

    @Test
    void noTypeHoldingAUriOrCredentialPrintsItsSecret() {
        List<String> problems = SecretsInToString.problems(
                List.of(
                        "io.cerberus.spi",
                        "io.cerberus.internal",
                        "io.cerberus.local",
                        "io.cerberus.idempotency",
                        "io.cerberus.redis",
                        "io.cerberus.zookeeper",
                        "io.cerberus.etcd",
                        "io.cerberus.jdbc",
                        "io.cerberus.memcached",
                        "io.cerberus.cli"),
                Map.of());
        assertThat(problems).isEmpty();
    }
}
