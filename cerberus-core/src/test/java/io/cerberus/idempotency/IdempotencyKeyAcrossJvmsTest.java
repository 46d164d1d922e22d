package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A key is stored by one JVM and looked up by another: each must compute the same id. */
class IdempotencyKeyAcrossJvmsTest {
    private static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));
    private static final int JVMS = 4;

    @Test
    void fourJvmsGiveOneKeyForOneSet() throws Exception {
        String classPath = location(IdempotencyKey.class) + File.pathSeparator + location(SetKeyPrinter.class);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < JVMS; i++) {
            processes.add(new ProcessBuilder(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath,
                    SetKeyPrinter.class.getName()).redirectErrorStream(true).start());
        }
        List<String> ids = new ArrayList<>();
        List<String> lines = new ArrayList<>();
        for (Process process : processes) {
            boolean exited = process.waitFor((long) (30_000 * SCALE), TimeUnit.MILLISECONDS);
            if (!exited) {
                process.destroyForcibly();
            }
            String line = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertThat(exited && process.exitValue() == 0).as("the child JVM printed: %s", line).isTrue();
            lines.add(line);
            ids.add(line.split(" ", 2)[0]);
        }

        assertThat(ids).as("id and set order per JVM: %s", lines).containsOnly(ids.get(0)).hasSize(JVMS);
    }

    private static String location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
