package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.local.SwitchableEngineProvider;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client's own calls at their edges: on a closed client, on an engine without the capability they need. */
class ClientCallsTest {
    private final String a = "a-" + UUID.randomUUID();
    private final String b = "b-" + UUID.randomUUID();

    @AfterEach
    void giveBack() {
        SwitchableEngineProvider.without(a);
    }

    private Cerberus twoEngines() {
        return Cerberus.builder()
                .engine("primary", "switchable:" + a)
                .engine("secondary", "switchable:" + b)
                .build();
    }

    @Test
    void everyCallThatNeedsTheEnginesIsRefusedOnAClosedClient() {
        SwitchableEngineProvider.without(a, Capability.INSPECT); // a forced release then reads no holder first
        Cerberus cerberus = twoEngines();
        DistributedLock lock = cerberus.lock("before-close");
        cerberus.close();
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("lock", () -> cerberus.lock("x"));
        calls.put("isLocked", lock::isLocked);
        calls.put("switchEngine()", cerberus::switchEngine);
        calls.put("switchEngine(name)", () -> cerberus.switchEngine("secondary"));
        calls.put("checkEngine", () -> cerberus.checkEngine("primary"));
        calls.put("inspect", () -> cerberus.inspect(""));
        calls.put("inspectEngine", () -> cerberus.inspectEngine("secondary", ""));
        calls.put("forceRelease", () -> cerberus.forceRelease("x", 1));
        calls.put("idempotency", () -> cerberus.idempotency(IdempotencyOptions.defaults()));
        calls.forEach((name, call) -> assertThatThrownBy(call)
                .as(name)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("this Cerberus client is closed"));
        assertThat(cerberus.currentEngine())
                .as("what the client is made of can still be read")
                .isEqualTo("primary");
    }

    @Test
    void inspectAndForceReleaseNeedTheirCapabilitiesAndSayWhichIsMissing() {
        SwitchableEngineProvider.without(a, Capability.INSPECT, Capability.FENCING);
        try (Cerberus cerberus = twoEngines()) {
            assertThatThrownBy(() -> cerberus.inspect("order"))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageStartingWith("engine 'primary' (switchable:" + a + ") has no listing held locks");
            assertThatThrownBy(() -> cerberus.forceRelease("order", 7))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageStartingWith("engine 'primary' (switchable:" + a + ") has no fencing tokens");
            assertThat(cerberus.inspectEngine("secondary", "order")).isEmpty();
        }
    }

    @Test
    void checkEngineReturnsWhatTheEngineWarnsOf() throws Exception {
        try (Cerberus cerberus = twoEngines()) {
            assertThat(cerberus.checkEngine("secondary")).containsExactly("switchable:" + b + " is a test engine");
            try (Lease held = cerberus.lock("order").acquire(Duration.ZERO)) {
                assertThat(cerberus.inspect("order"))
                        .singleElement()
                        .satisfies(info -> assertThat(info.fencingToken()).isEqualTo(held.fencingToken()));
            }
        }
    }
}
