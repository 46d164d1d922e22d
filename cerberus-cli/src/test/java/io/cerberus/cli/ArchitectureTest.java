package io.cerberus.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who may import whom, checked on the compiled main classes (DESIGN section 3). It lives here
 * because this module's class path holds the core and every engine. The rules:
 * <ul>
 *   <li>nothing outside the core imports {@code io.cerberus.internal}: engines use the SPI and
 *       {@code io.cerberus.spi.support};</li>
 *   <li>no engine imports another engine;</li>
 *   <li>the core imports only the JDK and itself: no engine, no framework, no client library;</li>
 *   <li>the cerberus command and the bench do not use the testkit: they start their servers with
 *       cerberus-servers, and their jars carry no test framework and no counting engine. The bench's
 *       classes are not on this class path, so here the rule checks the command; the bench's pom
 *       does not name the testkit at all;</li>
 *   <li>processes are started only by cerberus-servers, and by {@code cerberus exec}, which runs the
 *       user's command ({@code CommandLauncher}, {@code SignalForwarder}): checked on these main
 *       classes and, since the bench's and the tests' classes are not here, on every source file of
 *       the repository.</li>
 * </ul>
 */
class ArchitectureTest {
    /** The core's packages. */
    private static final String[] CORE = {"io.cerberus", "io.cerberus.idempotency..", "io.cerberus.spi..", "io.cerberus.internal..",
        "io.cerberus.local.."};
    /** Every engine module's package. */
    private static final String[] ENGINES = {"io.cerberus.redis..", "io.cerberus.zookeeper..", "io.cerberus.etcd..", "io.cerberus.jdbc..",
        "io.cerberus.memcached.."};

    static final ArchRule NO_INTERNAL_OUTSIDE_THE_CORE = noClasses().that().resideOutsideOfPackages(CORE)
            .should().dependOnClassesThat().resideInAPackage("io.cerberus.internal..")
            .because("engines and tools use the SPI and io.cerberus.spi.support, not the core's internals");
    static final ArchRule NO_ENGINE_IMPORTS_ANOTHER = CompositeArchRule.of(Arrays.stream(ENGINES)
            .map(engine -> noClasses().that().resideInAPackage(engine).should().dependOnClassesThat()
                    .resideInAnyPackage(Arrays.stream(ENGINES).filter(other -> !other.equals(engine)).toArray(String[]::new)).allowEmptyShould(true))
            .map(ArchRule.class::cast).toList()).because("each engine stands alone on the SPI");
    static final ArchRule THE_CORE_IMPORTS_ONLY_THE_JDK = noClasses().that().resideInAnyPackage(CORE)
            .should().dependOnClassesThat().resideOutsideOfPackages(concat(CORE, "java.."))
            .because("cerberus-core has no third-party runtime dependency and knows no engine");
    static final ArchRule NO_TESTKIT_IN_THE_TOOLS = noClasses().that().resideInAnyPackage("io.cerberus.cli..", "io.cerberus.bench..")
            .should().dependOnClassesThat().resideInAPackage("io.cerberus.testkit..")
            .because("the cerberus command and the bench start servers with cerberus-servers; the testkit is for tests");

    /** The classes of {@code cerberus exec}, which starts the user's command and signals it. */
    private static final String[] EXEC = {"io.cerberus.cli.CommandLauncher", "io.cerberus.cli.SignalForwarder"};
    static final ArchRule PROCESSES_ONLY_FROM_THE_SERVERS_MODULE = noClasses().that().resideOutsideOfPackage("io.cerberus.servers..")
            .and().doNotHaveFullyQualifiedName(EXEC[0]).and().doNotHaveFullyQualifiedName(EXEC[1])
            .should().dependOnClassesThat().areAssignableTo(ProcessBuilder.class)
            .because("servers and child JVMs are started from cerberus-servers (ManagedProcess), in one way");
    /** What starts a process in source code. */
    private static final Pattern STARTS_A_PROCESS = Pattern.compile("new ProcessBuilder\\(|Runtime\\.getRuntime\\(\\)\\.exec\\(|QuorumPeerMain");

    private static JavaClasses mainClasses;

    @BeforeAll
    static void importMainClasses() {
        mainClasses = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.cerberus");
    }

    @Test
    void theClassPathHoldsTheCoreAndTheEngines() {
        assertThat(mainClasses.containPackage("io.cerberus.internal")).isTrue();
        assertThat(mainClasses.containPackage("io.cerberus.cli")).isTrue();
        for (String engine : new String[] {"redis", "zookeeper", "etcd", "jdbc", "memcached"}) {
            assertThat(mainClasses.containPackage("io.cerberus." + engine)).as(engine).isTrue();
        }
    }

    @Test
    void nothingOutsideTheCoreImportsItsInternals() {
        NO_INTERNAL_OUTSIDE_THE_CORE.check(mainClasses);
    }

    @Test
    void noEngineImportsAnother() {
        NO_ENGINE_IMPORTS_ANOTHER.check(mainClasses);
    }

    @Test
    void theCoreImportsOnlyTheJdkAndItself() {
        THE_CORE_IMPORTS_ONLY_THE_JDK.check(mainClasses);
    }

    @Test
    void theCommandLineDoesNotUseTheTestkit() {
        NO_TESTKIT_IN_THE_TOOLS.check(mainClasses);
    }

    @Test
    void anEngineClassThatImportsTheInternalsOrAnotherEngineFailsTheRules() {
        JavaClasses offender = new ClassFileImporter().importClasses(io.cerberus.redis.ArchitectureOffender.class);
        assertThatThrownBy(() -> NO_INTERNAL_OUTSIDE_THE_CORE.check(offender)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.internal.Checks");
        JavaClasses withTarget = new ClassFileImporter().importClasses(io.cerberus.redis.ArchitectureOffender.class,
                io.cerberus.jdbc.JdbcEngineProvider.class);
        assertThatThrownBy(() -> NO_ENGINE_IMPORTS_ANOTHER.check(withTarget)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.jdbc");
    }

    @Test
    void aCommandLineClassThatUsesTheTestkitFailsTheRule() {
        JavaClasses offender = new ClassFileImporter().importClasses(ArchitectureOffender.class);
        assertThatThrownBy(() -> NO_TESTKIT_IN_THE_TOOLS.check(offender)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.testkit.TestTimes");
    }

    @Test
    void processesAreStartedOnlyFromTheServersModuleAndCerberusExec() {
        PROCESSES_ONLY_FROM_THE_SERVERS_MODULE.check(mainClasses);
    }

    @Test
    void noSourceFileOutsideTheServersModuleStartsAProcess() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("cerberus-servers")).as("the repository root above this module").isDirectory();
        List<String> offenders;
        try (Stream<Path> files = Files.walk(root)) {
            offenders = files.filter(file -> file.toString().endsWith(".java") && file.toString().contains("/src/"))
                    .filter(file -> !root.relativize(file).startsWith("cerberus-servers"))
                    .filter(file -> Arrays.stream(EXEC).noneMatch(exec -> file.endsWith(exec.replace('.', '/') + ".java")))
                    .filter(file -> !file.endsWith("ArchitectureTest.java"))
                    .filter(ArchitectureTest::startsAProcess)
                    .map(file -> root.relativize(file).toString()).sorted().toList();
        }
        assertThat(offenders).as("source files that start a process themselves instead of through cerberus-servers").isEmpty();
    }

    @Test
    void aClassThatStartsAProcessItselfFailsTheRule() {
        JavaClasses offender = new ClassFileImporter().importClasses(ArchitectureOffender.class);
        assertThatThrownBy(() -> PROCESSES_ONLY_FROM_THE_SERVERS_MODULE.check(offender)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.lang.ProcessBuilder");
    }

    private static boolean startsAProcess(Path file) {
        try {
            return STARTS_A_PROCESS.matcher(Files.readString(file)).find();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String[] concat(String[] first, String... more) {
        String[] all = Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, all, first.length, more.length);
        return all;
    }
}
