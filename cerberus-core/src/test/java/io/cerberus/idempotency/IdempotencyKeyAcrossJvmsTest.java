package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.Timeouts;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A key is stored by one JVM and looked up by another: each must compute the same id. */
class IdempotencyKeyAcrossJvmsTest {
    private static final int JVMS = 4;

    @Test
    void fourJvmsGiveOneKeyForOneSet() throws Exception {
        String classPath = location(IdempotencyKey.class) + File.pathSeparator + location(SetKeyPrinter.class);
        List<String> command = JavaCommand.of(SetKeyPrinter.class)
                .classPath(classPath)
                .quickStart("64m")
                .toList();
        List<ManagedProcess> processes = new ArrayList<>();
        try {
            for (int i = 0; i < JVMS; i++) {
                processes.add(ManagedProcess.start("key-printer-" + i, command));
            }
            List<String> lines = new ArrayList<>();
            for (ManagedProcess process : processes) {
                String line = process.nextLine(Timeouts.scaled(Duration.ofSeconds(30)));
                assertThat(process.awaitExit(Timeouts.scaled(Duration.ofSeconds(30))))
                        .as("the exit code of %s", process.name())
                        .isZero();
                lines.add(line);
            }
            List<String> ids = lines.stream().map(line -> line.split(" ", 2)[0]).toList();

            assertThat(ids)
                    .as("id and set order per JVM: %s", lines)
                    .containsOnly(ids.get(0))
                    .hasSize(JVMS);
        } finally {
            processes.forEach(ManagedProcess::close);
        }
    }

    private static String location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
    }
}
