package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code cerberus-bom} names every published module of the build, at the build's version, and
 * nothing else (so that in a Spring Boot application Boot's netty and gRPC stay Boot's);
 * {@code cerberus-dependencies} names only the netty and gRPC lines the modules share, at the
 * build's versions. A module added to the build and forgotten in the BOM fails here, and so does a
 * netty or gRPC upgrade of the build that {@code cerberus-dependencies} does not follow.
 * Unpublished modules (the bench, the examples) set {@code maven.deploy.skip}.
 */
class BomTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ARTIFACT = Pattern.compile("<artifactId>([^<]+)</artifactId>");
    /** The shared lines the BOM imports, by artifact, with the property of the parent that sets the build's version. */
    private static final java.util.Map<String, String> SHARED_LINES =
            java.util.Map.of("netty-bom", "netty.version", "grpc-bom", "grpc.version");

    @Test
    void theBomNamesEveryPublishedModuleAndNothingElse() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        List<String> published = new ArrayList<>();
        Matcher modules = MODULE.matcher(root);
        while (modules.find()) {
            String pom = Files.readString(ROOT.resolve(modules.group(1)).resolve("pom.xml"));
            String artifact = ownArtifactId(pom);
            boolean skipped = pom.contains("<maven.deploy.skip>true</maven.deploy.skip>");
            if (!skipped && !artifact.equals("cerberus-bom") && !pom.contains("<packaging>pom</packaging>")) {
                published.add(artifact);
            }
        }
        String bom = Files.readString(ROOT.resolve("cerberus-bom/pom.xml"));
        assertThat(published).as("published modules of the build").contains("cerberus-core", "cerberus-redis");
        assertThat(managed(bom))
                .as("what cerberus-bom manages: the modules, no third-party line")
                .containsExactlyInAnyOrderElementsOf(published);
        String dependencies = Files.readString(ROOT.resolve("cerberus-dependencies/pom.xml"));
        assertThat(managed(dependencies))
                .as("what cerberus-dependencies manages: the shared lines")
                .containsExactlyInAnyOrderElementsOf(SHARED_LINES.keySet());
        SHARED_LINES.forEach((artifact, property) -> assertThat(managedVersion(dependencies, artifact))
                .as("%s in cerberus-dependencies, at the build's %s", artifact, property)
                .isEqualTo(property(root, property)));
        for (String pom : List.of(bom, dependencies)) {
            assertThat(pom)
                    .as("a BOM has no parent, so importing it sets no other third-party version")
                    .doesNotContain("<parent>");
            assertThat(version(pom)).as("a BOM's version is the build's").isEqualTo(version(root));
        }
    }

    private static List<String> managed(String bom) {
        List<String> managed = new ArrayList<>();
        Matcher artifacts = ARTIFACT.matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
        while (artifacts.find()) {
            managed.add(artifacts.group(1));
        }
        return managed;
    }

    private static String managedVersion(String bom, String artifact) {
        Matcher matcher = Pattern.compile(
                        "<artifactId>" + Pattern.quote(artifact) + "</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(bom);
        assertThat(matcher.find()).as("%s with a version in the BOM", artifact).isTrue();
        return matcher.group(1);
    }

    private static String property(String pom, String name) {
        Matcher matcher = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">")
                .matcher(pom);
        assertThat(matcher.find()).as("property %s in the parent", name).isTrue();
        return matcher.group(1);
    }

    /** @return the module's own artifactId: the first one after its parent block, if any */
    private static String ownArtifactId(String pom) {
        int parentEnd = pom.indexOf("</parent>");
        Matcher matcher = ARTIFACT.matcher(parentEnd < 0 ? pom : pom.substring(parentEnd));
        assertThat(matcher.find()).isTrue();
        return matcher.group(1);
    }

    private static String version(String pom) {
        int parentEnd = pom.indexOf("</parent>");
        Matcher matcher =
                Pattern.compile("<version>([^<]+)</version>").matcher(parentEnd < 0 ? pom : pom.substring(parentEnd));
        assertThat(matcher.find()).isTrue();
        return matcher.group(1);
    }
}
