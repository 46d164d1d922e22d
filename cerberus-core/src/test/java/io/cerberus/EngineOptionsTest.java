package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.spi.EngineContext;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EngineOptionsTest {
    private record Tls(String trustStore) implements EngineOptions {}

    private record Auth(String user) implements EngineOptions {}

    @Test
    void anEngineThatTakesNoOptionsRefusesThemWhenBuilt() {
        assertThatThrownBy(() -> Cerberus.builder().engine("mem:", new Tls("x")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not take Tls")
                .hasMessageContaining("options it takes: none");
    }

    @Test
    void twoOptionsOfOneClassAreRefused() {
        assertThatThrownBy(() -> Cerberus.builder().engine("mem:", new Tls("a"), new Tls("b")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("two Tls");
    }

    @Test
    void aNullOptionIsRefused() {
        assertThatThrownBy(() -> Cerberus.builder().engine("mem:", (EngineOptions) null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
    }

    @Test
    void anEngineFindsItsOptionAndRefusesForeignOnes() {
        EngineContext context = new EngineContext(
                "x://user:secret@h", Duration.ofSeconds(1), (token, reason) -> {}, List.of(new Tls("store")));
        assertThat(context.option(Tls.class, Set.of(Tls.class, Auth.class))).contains(new Tls("store"));
        assertThat(context.option(Auth.class, Set.of(Tls.class, Auth.class))).isEmpty();
        assertThatThrownBy(() -> context.option(Auth.class, Set.of(Auth.class)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not take Tls")
                .hasMessageContaining("options it takes: Auth")
                .hasMessageNotContaining("secret");
    }

    @Test
    void aContextBuiltWithoutALeaseTakesTheBuildersDefault() {
        EngineContext context = new EngineContext("mem:", Duration.ofSeconds(1), (token, reason) -> {}, List.of());
        assertThat(context.defaultLease()).isEqualTo(CerberusBuilder.DEFAULT_LEASE);
    }
}
