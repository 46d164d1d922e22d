package io.cerberus.check.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How a cut through the clients' proxies is confirmed from the target's own log. */
class ClientProxiesTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"partition", "drop"})
    void aCutIsConfirmedByACallBegunInItThatEndedOnlyAfterTheHeal(String fault) throws Exception {
        assertThat(cut(fault, true)).contains("confirmed " + fault + ": {claim held until the heal=1}");
    }

    @Test
    void aCutTheTargetLoggedNothingOfIsNotConfirmed() throws Exception {
        assertThat(cut("drop", false))
                .contains("unconfirmed drop: c1 logged no engine error, lost lease or call held by it");
    }

    /** @return the fault log of one cut of 400 ms on client c1, which logs a call held across the heal if asked */
    private String cut(String fault, boolean heldCall) throws Exception {
        Path faults = dir.resolve("faults.log");
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                ClientProxies proxies = new ClientProxies(dir);
                HoldLog faultLog = new HoldLog(faults);
                HoldLog clientLog = new HoldLog(dir.resolve("c1.log"))) {
            proxies.clientUri("c1", "redis://127.0.0.1:" + server.getLocalPort());
            Thread client = new Thread(() -> {
                if (heldCall) {
                    logACallHeldAcrossTheHeal(faults, clientLog);
                }
            });
            client.start();
            proxies.inject(
                    fault,
                    "c1",
                    Duration.ofMillis(400),
                    Duration.ofMillis(100),
                    faultLog,
                    Duration.ofMillis(heldCall ? 5000 : 300));
            client.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(client.isAlive()).isFalse();
            return Files.readString(faults);
        }
    }

    /** Once the fault log shows the heal, logs a call that began halfway through the cut and ends now. */
    private static void logACallHeldAcrossTheHeal(Path faults, HoldLog clientLog) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            while (System.nanoTime() - deadline < 0) {
                List<HoldLog.Event> events = Files.exists(faults) ? HoldLog.read(faults) : List.of();
                if (events.size() >= 2 && events.get(1).detail().equals("heal")) {
                    long middle = events.get(0).nanos()
                            + (events.get(1).nanos() - events.get(0).nanos()) / 2;
                    clientLog.log(
                            "ENGINE",
                            "c1",
                            -1,
                            "claim " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - middle) + "ms");
                    return;
                }
                Thread.sleep(5);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
