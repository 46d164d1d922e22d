package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Capability;
import org.junit.jupiter.api.Test;

/** What the registry says of the engines on the class path before any is opened. */
class EngineRegistryTest {

    @Test
    void anEnginesDeclaredCapabilitiesAreKnownBeforeItOpensAndAnUnknownSchemeHasNone() {
        assertThat(EngineRegistry.declaredCapabilities("mem:anything"))
                .contains(Capability.FENCING, Capability.INSPECT);
        assertThat(EngineRegistry.declaredCapabilities("nosuch://host")).isEmpty();
    }

    @Test
    void theSchemesWithACapabilityAreNamedForErrorMessages() {
        String fencing = EngineRegistry.schemesWith(Capability.FENCING);
        assertThat(fencing).contains("mem:").doesNotContain("none on the class path");
        assertThat(fencing.split(", ")).allSatisfy(scheme -> assertThat(scheme).endsWith(":"));
        assertThat(EngineRegistry.schemesWith(Capability.SESSION_BOUND))
                .as("only the engines that declare it")
                .contains("file:")
                .doesNotContain("mem:");
    }
}
