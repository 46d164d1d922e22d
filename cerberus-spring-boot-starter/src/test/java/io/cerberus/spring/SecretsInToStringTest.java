package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.SecretsInToString;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every type of the starter that holds a URI or credential prints without its secret. */
class SecretsInToStringTest {

    @Test
    void noTypeHoldingAUriOrCredentialPrintsItsSecret() {
        assertThat(SecretsInToString.problems(List.of("io.cerberus.spring", "io.cerberus.boot3"), Map.of()))
                .isEmpty();
    }
}
