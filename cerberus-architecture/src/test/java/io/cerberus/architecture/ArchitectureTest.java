package io.cerberus.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who may import whom, checked on the compiled main classes of every module (DESIGN section 3);
 * this module's test class path holds them all. The rules:
 * <ul>
 *   <li>nothing outside the core imports {@code io.cerberus.internal}: engines use the SPI and
 *       {@code io.cerberus.spi.support};</li>
 *   <li>no engine imports another engine;</li>
 *   <li>the core imports only the JDK and itself: no engine, no framework, no client library;</li>
 *   <li>the cerberus command, its checker and the bench do not use the testkit: they start their servers with
 *       cerberus-servers, and their jars carry no test framework and no counting engine;</li>
 *   <li>processes are started only by cerberus-servers, and by {@code cerberus exec}, which runs the
 *       user's command ({@code CommandLauncher}, {@code SignalForwarder}): checked on the main
 *       classes and, since tests' classes are not imported, on every source file of the tree;</li>
 *   <li>the packages under {@code io.cerberus} are free of cycles (see {@link #NO_PACKAGE_CYCLES}).</li>
 * </ul>
 * Each rule has an offender under an {@code offenders} package of this module's tests, which the
 * real checks never import, and a test that shows the rule failing on it.
 */
class ArchitectureTest {
    /** The core's packages. */
    private static final String[] CORE = {
        "io.cerberus",
        "io.cerberus.idempotency..",
        "io.cerberus.fencing..",
        "io.cerberus.spi..",
        "io.cerberus.internal..",
        "io.cerberus.local.."
    };
    /** Every engine module's package. */
    private static final String[] ENGINES = {
        "io.cerberus.redis..",
        "io.cerberus.zookeeper..",
        "io.cerberus.etcd..",
        "io.cerberus.jdbc..",
        "io.cerberus.memcached.."
    };

    static final ArchRule NO_INTERNAL_OUTSIDE_THE_CORE = noClasses()
            .that()
            .resideOutsideOfPackages(CORE)
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.cerberus.internal..")
            .because("engines and tools use the SPI and io.cerberus.spi.support, not the core's internals");
    static final ArchRule NO_ENGINE_IMPORTS_ANOTHER = CompositeArchRule.of(Arrays.stream(ENGINES)
                    .map(engine -> noClasses()
                            .that()
                            .resideInAPackage(engine)
                            .should()
                            .dependOnClassesThat()
                            .resideInAnyPackage(Arrays.stream(ENGINES)
                                    .filter(other -> !other.equals(engine))
                                    .toArray(String[]::new))
                            .allowEmptyShould(true))
                    .map(ArchRule.class::cast)
                    .toList())
            .because("each engine stands alone on the SPI");
    static final ArchRule THE_CORE_IMPORTS_ONLY_THE_JDK = noClasses()
            .that()
            .resideInAnyPackage(CORE)
            .should()
            .dependOnClassesThat()
            // javax.sql: the JDK's java.sql module (a fenced table's DataSource)
            .resideOutsideOfPackages(concat(CORE, "java..", "javax.sql.."))
            .because("cerberus-core has no third-party runtime dependency and knows no engine");
    static final ArchRule NO_TESTKIT_IN_THE_TOOLS = noClasses()
            .that()
            .resideInAnyPackage("io.cerberus.cli..", "io.cerberus.check..", "io.cerberus.bench..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.cerberus.testkit..")
            .because(
                    "the cerberus command, its checker and the bench start servers with cerberus-servers; the testkit is for tests");

    /** The classes of {@code cerberus exec}, which starts the user's command and signals it. */
    private static final String[] EXEC = {"io.cerberus.cli.CommandLauncher", "io.cerberus.cli.SignalForwarder"};

    static final ArchRule PROCESSES_ONLY_FROM_THE_SERVERS_MODULE = noClasses()
            .that()
            .resideOutsideOfPackage("io.cerberus.servers..")
            .and()
            .doNotHaveFullyQualifiedName(EXEC[0])
            .and()
            .doNotHaveFullyQualifiedName(EXEC[1])
            .should()
            .dependOnClassesThat()
            .areAssignableTo(ProcessBuilder.class)
            .because("servers and child JVMs are started from cerberus-servers (ManagedProcess), in one way");
    /** What starts a process in source code. */
    private static final Pattern STARTS_A_PROCESS =
            Pattern.compile("new ProcessBuilder\\(|Runtime\\.getRuntime\\(\\)\\.exec\\(|QuorumPeerMain");

    /**
     * One slice per package below {@code io.cerberus}, in every module: a cycle between two
     * packages means neither can be understood, tested or moved without the other. The root
     * package {@code io.cerberus} is in no slice: it is the API's front, whose exceptions and values
     * every layer uses and whose builder builds the implementation, so it depends on
     * {@code io.cerberus.internal} by design. One edge is allowed: {@code EngineContext} (the SPI)
     * hides its URI's secrets with {@code spi.support.Redaction}, the one redaction engines use.
     */
    static final ArchRule NO_PACKAGE_CYCLES = slices().matching("io.cerberus.(**)")
            .should()
            .beFreeOfCycles()
            .ignoreDependency(named("io.cerberus.spi.EngineContext"), named("io.cerberus.spi.support.Redaction"))
            .because("a package cycle ties packages together: none can be read, tested or moved alone");

    private static JavaClasses mainClasses;

    @BeforeAll
    static void importMainClasses() {
        mainClasses = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.cerberus");
    }

    @Test
    void theClassPathHoldsEveryModuleAndNoOffender() {
        for (String module : new String[] {
            "internal",
            "idempotency",
            "fencing",
            "spi.support",
            "local",
            "redis",
            "zookeeper",
            "etcd",
            "jdbc",
            "memcached",
            "micrometer",
            "jackson",
            "spring",
            "spring.boot3",
            "integration",
            "shedlock",
            "servers",
            "testkit",
            "check",
            "cli",
            "bench"
        }) {
            assertThat(mainClasses.containPackage("io.cerberus." + module))
                    .as(module)
                    .isTrue();
        }
        assertThat(mainClasses.stream().map(JavaClass::getPackageName).filter(name -> name.contains(".offenders")))
                .as("the offenders are tests' classes, never imported by the real checks")
                .isEmpty();
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
    void processesAreStartedOnlyFromTheServersModuleAndCerberusExec() {
        PROCESSES_ONLY_FROM_THE_SERVERS_MODULE.check(mainClasses);
    }

    @Test
    void noSourceFileOutsideTheServersModuleStartsAProcess() {
        Path root = Tree.root();
        List<String> offenders = startingAProcess(Tree.javaSources().stream()
                .filter(file -> !root.relativize(file).startsWith("cerberus-servers"))
                .toList());
        assertThat(offenders)
                .as("source files that start a process themselves instead of through cerberus-servers")
                .isEmpty();
    }

    @Test
    void packagesAreFreeOfCycles() {
        NO_PACKAGE_CYCLES.check(mainClasses);
    }

    @Test
    void anEngineClassThatImportsTheInternalsOrAnotherEngineFailsTheRules() {
        JavaClasses offender =
                new ClassFileImporter().importClasses(io.cerberus.redis.offenders.ArchitectureOffender.class);
        assertThatThrownBy(() -> NO_INTERNAL_OUTSIDE_THE_CORE.check(offender))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.internal.Checks");
        JavaClasses withTarget = new ClassFileImporter()
                .importClasses(
                        io.cerberus.redis.offenders.ArchitectureOffender.class,
                        io.cerberus.jdbc.JdbcEngineProvider.class);
        assertThatThrownBy(() -> NO_ENGINE_IMPORTS_ANOTHER.check(withTarget))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.jdbc");
    }

    @Test
    void aCoreClassThatImportsAnEngineOrALibraryFailsTheRule() {
        JavaClasses offender = new ClassFileImporter().importClasses(io.cerberus.internal.offenders.CoreOffender.class);
        assertThatThrownBy(() -> THE_CORE_IMPORTS_ONLY_THE_JDK.check(offender))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.redis.RedisEngineProvider")
                .hasMessageContaining("org.assertj.core.api.Assertions");
    }

    @Test
    void aCommandLineClassThatUsesTheTestkitFailsTheRule() {
        JavaClasses offender =
                new ClassFileImporter().importClasses(io.cerberus.cli.offenders.ArchitectureOffender.class);
        assertThatThrownBy(() -> NO_TESTKIT_IN_THE_TOOLS.check(offender))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.cerberus.testkit.TestTimes");
    }

    @Test
    void aClassThatStartsAProcessItselfFailsTheRule() {
        JavaClasses offender =
                new ClassFileImporter().importClasses(io.cerberus.cli.offenders.ArchitectureOffender.class);
        assertThatThrownBy(() -> PROCESSES_ONLY_FROM_THE_SERVERS_MODULE.check(offender))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("java.lang.ProcessBuilder");
    }

    @Test
    void aSourceFileThatStartsAProcessItselfFailsTheScan() {
        Path offender = Tree.root()
                .resolve("cerberus-architecture/src/test/java/io/cerberus/cli/offenders/ArchitectureOffender.java");
        assertThat(startingAProcess(List.of(offender)))
                .containsExactly(
                        "cerberus-architecture/src/test/java/io/cerberus/cli/offenders/" + "ArchitectureOffender.java");
    }

    @Test
    void twoPackagesThatImportEachOtherFailTheRule() {
        JavaClasses offender = new ClassFileImporter().importPackages("io.cerberus.architecture.offenders.cycle");
        assertThatThrownBy(() -> NO_PACKAGE_CYCLES.check(offender))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Cycle detected")
                .hasMessageContaining("io.cerberus.architecture.offenders.cycle.ping.Ping")
                .hasMessageContaining("io.cerberus.architecture.offenders.cycle.pong.Pong");
    }

    /** @return the files, relative to the root, that start a process but are not {@code cerberus exec}'s */
    private static List<String> startingAProcess(List<Path> files) {
        Path root = Tree.root();
        return files.stream()
                .filter(file -> Arrays.stream(EXEC).noneMatch(exec -> file.endsWith(exec.replace('.', '/') + ".java")))
                .filter(file -> !file.endsWith("ArchitectureTest.java"))
                .filter(file -> STARTS_A_PROCESS.matcher(Tree.read(file)).find())
                .map(file -> root.relativize(file).toString())
                .sorted()
                .toList();
    }

    private static DescribedPredicate<JavaClass> named(String name) {
        return DescribedPredicate.describe(
                name, javaClass -> javaClass.getName().equals(name));
    }

    private static String[] concat(String[] first, String... more) {
        String[] all = Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, all, first.length, more.length);
        return all;
    }
}
