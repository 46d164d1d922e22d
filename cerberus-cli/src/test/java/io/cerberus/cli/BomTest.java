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
 * nothing else: a module added to the build and forgotten in the BOM fails here. Unpublished
 * modules (the bench, the examples) set {@code maven.deploy.skip}.
 */
class BomTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ARTIFACT = Pattern.compile("<artifactId>([^<]+)</artifactId>");

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
        List<String> managed = new ArrayList<>();
        Matcher artifacts = ARTIFACT.matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
        while (artifacts.find()) {
            managed.add(artifacts.group(1));
        }
        assertThat(published).as("published modules of the build").contains("cerberus-core", "cerberus-redis");
        assertThat(managed).as("the modules cerberus-bom manages").containsExactlyInAnyOrderElementsOf(published);
        assertThat(bom).as("the BOM has no parent, so importing it sets no third-party version").doesNotContain("<parent>");
        assertThat(version(bom)).as("the BOM's version is the build's").isEqualTo(version(root));
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
        Matcher matcher = Pattern.compile("<version>([^<]+)</version>").matcher(parentEnd < 0 ? pom : pom.substring(parentEnd));
        assertThat(matcher.find()).isTrue();
        return matcher.group(1);
    }
}
