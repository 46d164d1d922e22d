package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
    @Test
    void neverHandsOutAPortTwiceAndTakesThemAllBelowTheEphemeralRange() throws IOException {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 500; i++) {
            assertThat(ports.add(FreePorts.next())).as("port #%d is new", i).isTrue();
        }
        int ephemeralLow = Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                .get(0)
                .split("\\s+")[0]);
        assertThat(ports)
                .allSatisfy(port -> assertThat(port).isBetween(15_000, ephemeralLow - 1))
                .as("spread up to the ephemeral range, not only over the first thousand")
                .anySatisfy(port -> assertThat(port).isGreaterThan(16_000));
    }

    @Test
    void twoJvmsAliveAtOnceNeverHandOutTheSamePort() {
        Duration wait = Timeouts.scaled(Duration.ofSeconds(30));
        Set<Integer> ours = new HashSet<>();
        for (int i = 0; i < 400; i++) {
            ours.add(FreePorts.next());
        }
        // 400 ports each, out of about 17,000: apart only by chance, two JVMs would share about 9
        try (ManagedProcess other = ManagedProcess.startJava(TakePorts.class, "400")) {
            Set<Integer> theirs = parse(other.nextLine(wait));
            assertThat(theirs).as("the other JVM's ports").hasSize(400).doesNotContainAnyElementsOf(ours);
            for (int i = 0; i < 400; i++) {
                ours.add(FreePorts.next());
            }
            assertThat(ours).as("ours, taken while it holds its own").doesNotContainAnyElementsOf(theirs);
            other.closeInput();
            assertThat(other.awaitExit(wait)).isZero();
        }
    }

    /** The other JVM of {@link #twoJvmsAliveAtOnceNeverHandOutTheSamePort}: takes ports, says which, holds them until its input ends. */
    public static final class TakePorts {
        private TakePorts() {}

        public static void main(String[] args) throws IOException {
            StringBuilder ports = new StringBuilder();
            for (int i = 0; i < Integer.parseInt(args[0]); i++) {
                ports.append(FreePorts.next()).append(' ');
            }
            System.out.println(ports.toString().trim());
            System.in.transferTo(java.io.OutputStream.nullOutputStream());
        }
    }

    private static Set<Integer> parse(String ports) {
        Set<Integer> parsed = new HashSet<>();
        for (String port : ports.split(" ")) {
            parsed.add(Integer.parseInt(port));
        }
        return parsed;
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
