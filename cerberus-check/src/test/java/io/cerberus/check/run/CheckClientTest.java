package io.cerberus.check.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.EngineUnavailableException;
import io.cerberus.check.log.HoldLog;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckClientTest {

    @Test
    void aWorkerStartedWhileTheEngineIsDownConnectsOnceItAnswers(@TempDir Path dir) throws Exception {
        AtomicInteger tries = new AtomicInteger();
        String connected;
        try (HoldLog log = new HoldLog(dir.resolve("c1.log"))) {
            connected = CheckClient.connectWhenUp(
                    () -> {
                        if (tries.incrementAndGet() < 3) {
                            throw new EngineUnavailableException(
                                    "could not connect to redis engine redis://127.0.0.1:1",
                                    new java.net.ConnectException("refused"));
                        }
                        return "client";
                    },
                    new AtomicBoolean(),
                    log,
                    "c1");
        }

        assertThat(connected).isEqualTo("client");
        assertThat(HoldLog.read(dir.resolve("c1.log")))
                .extracting(HoldLog.Event::detail)
                .containsExactly("connect failed", "connect failed");
    }

    @Test
    void aWorkerStoppedBeforeTheEngineAnsweredEndsWithTheLastFailure(@TempDir Path dir) throws Exception {
        AtomicBoolean stopped = new AtomicBoolean();
        try (HoldLog log = new HoldLog(dir.resolve("c1.log"))) {
            assertThatThrownBy(() -> CheckClient.connectWhenUp(
                            () -> {
                                stopped.set(true); // its input ends while it tries
                                throw new EngineUnavailableException(
                                        "could not connect to redis engine redis://127.0.0.1:1",
                                        new java.net.ConnectException("refused"));
                            },
                            stopped,
                            log,
                            "c1"))
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("redis://127.0.0.1:1");
        }
    }
}
