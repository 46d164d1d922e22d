package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
    @Test
    void neverHandsOutAPortTwice() {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 500; i++) {
            assertThat(ports.add(FreePorts.next())).as("port #%d is new", i).isTrue();
        }
        assertThat(ports).allSatisfy(port -> assertThat(port).isGreaterThanOrEqualTo(15_000));
    }

    @Test
    void aPortIsAcceptingOnlyWhileAServerListensOnIt() throws IOException {
        int port = FreePorts.next();
        assertThat(FreePorts.accepts(port)).isFalse();
        try (ServerSocket server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
            FreePorts.awaitAccepting(
                    server.getLocalPort(), Timeouts.scaled(Duration.ofSeconds(10)), "the test's socket");
            assertThat(FreePorts.accepts(port)).isTrue();
        }
        assertThat(FreePorts.accepts(port)).isFalse();
    }

    @Test
    void waitingForAPortNobodyListensOnFailsNamingTheServerAndThePort() {
        int port = FreePorts.next();
        assertThatThrownBy(() -> FreePorts.awaitAccepting(port, Duration.ofMillis(50), "redis"))
                .isInstanceOf(ServerException.class)
                .hasMessage("timed out after 50ms waiting for redis to accept connections on 127.0.0.1:" + port);
    }
}
