package io.cerberus.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.cerberus.architecture.offenders.PinsACarrier;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * No library class waits while it holds a monitor ({@link MonitorScan}): the classes that run in
 * an application (the core, the engines, the metrics, codecs and Spring modules) are scanned in
 * their bytecode, since ArchUnit does not see {@code synchronized} blocks. The tools (the command,
 * the checker, the bench, the test servers and the testkit) run in their own processes and are
 * left out. The offender shows each kind of offence found, and the allowed shape passing.
 */
class MonitorsTest {
    /** Packages below io.cerberus that are tools, not library code. */
    private static final Set<String> TOOLS = Set.of("cli", "check", "bench", "servers", "testkit", "architecture");

    @Test
    void noLibraryClassWaitsHoldingAMonitor() {
        List<JavaClass> library = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.cerberus").stream()
                        .filter(MonitorsTest::isLibrary)
                        .toList();
        assertThat(library).as("library classes on the class path").hasSizeGreaterThan(200);
        List<String> offences = library.stream()
                .flatMap(type -> MonitorScan.offences(bytes(type)).stream())
                .sorted()
                .toList();
        assertThat(offences)
                .as("waits that hold a monitor, which pin a virtual thread's carrier")
                .isEmpty();
    }

    @Test
    void eachWaitHoldingAMonitorIsFound() {
        JavaClass offender = new ClassFileImporter().importClass(PinsACarrier.class);
        List<String> offences = MonitorScan.offences(bytes(offender));
        assertThat(offences).hasSize(3);
        assertThat(offences.get(0))
                .contains("PinsACarrier.sleepsHoldingItself")
                .contains("java.lang.Thread.sleep holding a monitor");
        assertThat(offences.get(1))
                .contains("PinsACarrier.waitsAfterAnEarlyReturn")
                .contains("java.util.concurrent.CompletableFuture.get holding a monitor");
        assertThat(offences.get(2)).contains("PinsACarrier.waitsOnAMonitor").contains("calls Object.wait");
    }

    private static boolean isLibrary(JavaClass type) {
        String[] parts = type.getPackageName().split("\\.");
        return parts.length < 3 || !TOOLS.contains(parts[2]);
    }

    private static byte[] bytes(JavaClass type) {
        try (InputStream in = type.getSource().orElseThrow().getUri().toURL().openStream()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
