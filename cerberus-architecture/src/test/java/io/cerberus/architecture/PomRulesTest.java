package io.cerberus.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/**
 * What the modules' POMs may say, read from the POM files:
 * <ul>
 *   <li>all versions live in the parent (STYLE): a module's dependency names no version the
 *       parent's {@code dependencyManagement} owns, and no literal version (a module's own
 *       dependencies, such as the bench's peers, take theirs from properties);</li>
 *   <li>every jar module sets {@code automatic.module.name} (the parent writes it into the jar's
 *       {@code Automatic-Module-Name}) to its root package, and its jar, when built (a
 *       {@code verify} run builds every jar before this module's tests), carries it. The runnable
 *       jars of the command and the bench are left out: they hold other libraries' packages, so they
 *       must not claim a module's name.</li>
 * </ul>
 */
class PomRulesTest {
    private static final String PARENT = "cerberus-parent";

    @Test
    void noModulePinsAVersionTheParentOwns() {
        Set<String> owned = parentOwned();
        assertThat(owned)
                .contains(
                        "io.dropwizard.metrics:metrics-core",
                        "org.xerial.snappy:snappy-java",
                        "com.github.spotbugs:spotbugs-annotations");
        List<Path> modules = modulePoms();
        assertThat(modules).hasSizeGreaterThan(15);
        assertThat(modules.stream().flatMap(pom -> pins(pom, owned).stream()).toList())
                .as("versions pinned in module POMs")
                .isEmpty();
    }

    @Test
    void aModuleThatPinsAVersionFailsTheRule() {
        Path offender = offender("pinning");
        assertThat(pins(offender, parentOwned()))
                .containsExactly(
                        "cerberus-architecture/src/test/resources/offenders/pinning/pom.xml: io.dropwizard.metrics:metrics-core 4.2.28 (the parent owns it)",
                        "cerberus-architecture/src/test/resources/offenders/pinning/pom.xml: com.example:some-library 1.0 (a literal version)");
    }

    @Test
    void everyJarModuleNamesItsModule() {
        List<String> problems = modulePoms().stream()
                .flatMap(pom -> moduleNameProblems(pom).stream())
                .toList();
        assertThat(problems).as("modules without a right Automatic-Module-Name").isEmpty();
    }

    @Test
    void aModuleWithoutAModuleNameFailsTheRule() {
        assertThat(moduleNameProblems(offender("unnamed")))
                .containsExactly(
                        "cerberus-architecture/src/test/resources/offenders/unnamed/pom.xml: no automatic.module.name property");
    }

    @Test
    void aJarWithoutTheModuleNameFailsTheRule(@TempDir Path dir) throws IOException {
        Path jar = dir.resolve("unnamed.jar");
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
            out.finish();
        }
        assertThat(jarProblem(jar, "io.cerberus.redis"))
                .isEqualTo("unnamed.jar says Automatic-Module-Name null, not io.cerberus.redis");
    }

    /** @return groupId:artifactId of every dependency the parent's dependencyManagement names itself */
    private static Set<String> parentOwned() {
        Element managed = child(pom(Tree.root().resolve("pom.xml")), "dependencyManagement");
        return children(child(managed, "dependencies"), "dependency").stream()
                .map(PomRulesTest::key)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** @return the POMs of the tree whose parent is cerberus-parent */
    private static List<Path> modulePoms() {
        return Tree.files("pom.xml").stream()
                .filter(file -> !file.equals(Tree.root().resolve("pom.xml")))
                .filter(file -> PARENT.equals(text(child(pom(file), "parent"), "artifactId")))
                .toList();
    }

    /** @return each dependency of the module that names a version it should not */
    static List<String> pins(Path pomFile, Set<String> owned) {
        List<String> pins = new ArrayList<>();
        for (Element dependency : children(child(pom(pomFile), "dependencies"), "dependency")) {
            String version = text(dependency, "version");
            if (version == null) {
                continue;
            }
            String where = Tree.root().relativize(pomFile) + ": " + key(dependency) + " " + version;
            if (owned.contains(key(dependency))) {
                pins.add(where + " (the parent owns it)");
            } else if (!version.startsWith("${")) {
                pins.add(where + " (a literal version)");
            }
        }
        return pins;
    }

    /** @return what is wrong with the module's name: a missing property, another root package, a jar without it */
    static List<String> moduleNameProblems(Path pomFile) {
        Element project = pom(pomFile);
        String artifactId = text(project, "artifactId");
        String packaging = text(project, "packaging");
        if (packaging != null && !packaging.equals("jar")) {
            return List.of();
        }
        String where = Tree.root().relativize(pomFile) + ": ";
        String name = text(child(project, "properties"), "automatic.module.name");
        if (name == null) {
            return List.of(where + "no automatic.module.name property");
        }
        List<String> problems = new ArrayList<>();
        Path module = pomFile.getParent();
        String root = rootPackage(module.resolve("src/main/java"));
        if (root != null && !root.equals(name)) {
            problems.add(where + "automatic.module.name " + name + " is not the root package " + root);
        }
        Path jar = module.resolve("target/" + artifactId + "-" + text(child(project, "parent"), "version") + ".jar");
        boolean runnable = artifactId.equals("cerberus-cli") || artifactId.equals("cerberus-bench");
        // a jar built before its pom last changed (a stale build of this checkout) says nothing about the pom
        if (!runnable && Files.isRegularFile(jar) && !builtBefore(jar, pomFile)) {
            String problem = jarProblem(jar, name);
            if (problem != null) {
                problems.add(where + problem);
            }
        }
        return problems;
    }

    private static boolean builtBefore(Path jar, Path pomFile) {
        try {
            return Files.getLastModifiedTime(jar).compareTo(Files.getLastModifiedTime(pomFile)) < 0;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** @return why the jar's manifest does not name the module so, or null if it does */
    static String jarProblem(Path jar, String name) {
        try (JarFile file = new JarFile(jar.toFile())) {
            Manifest manifest = file.getManifest();
            String said = manifest == null ? null : manifest.getMainAttributes().getValue("Automatic-Module-Name");
            return name.equals(said)
                    ? null
                    : jar.getFileName() + " says Automatic-Module-Name " + said + ", not " + name;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the longest package that holds every main source of the module, or null if it has none */
    private static String rootPackage(Path sources) {
        if (!Files.isDirectory(sources)) {
            return null;
        }
        try (Stream<Path> files = Files.walk(sources)) {
            List<String> packages = files.filter(
                            file -> file.toString().endsWith(".java") && !file.endsWith("package-info.java"))
                    .map(file -> sources.relativize(file.getParent()).toString().replace('/', '.'))
                    .distinct()
                    .toList();
            String root = packages.isEmpty() ? null : packages.get(0);
            for (String name : packages) {
                while (!(name + ".").startsWith(root + ".")) {
                    root = root.substring(0, root.lastIndexOf('.'));
                }
            }
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path offender(String name) {
        return Tree.root().resolve("cerberus-architecture/src/test/resources/offenders/" + name + "/pom.xml");
    }

    private static Element pom(Path file) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
    }

    private static String key(Element dependency) {
        return text(dependency, "groupId") + ":" + text(dependency, "artifactId");
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        if (parent == null) {
            return found;
        }
        for (var node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                found.add(element);
            }
        }
        return found;
    }

    private static String text(Element parent, String name) {
        Element element = child(parent, name);
        return element == null ? null : element.getTextContent().trim();
    }
}
