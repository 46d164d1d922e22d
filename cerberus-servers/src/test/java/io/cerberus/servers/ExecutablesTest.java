package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class ExecutablesTest {
    @Test
    void findsAProgramOnThePath() {
        assertThat(Executables.find("sh"))
                .hasValueSatisfying(path -> assertThat(Files.isExecutable(path)).isTrue());
        assertThat(Executables.require("sh", "dash"))
                .isEqualTo(Executables.find("sh").orElseThrow());
    }

    @Test
    void aMissingProgramNamesThePackageToInstall() {
        assertThat(Executables.find("cerberus-no-such-server")).isEmpty();
        assertThatThrownBy(() -> Executables.require("cerberus-no-such-server", "cerberus-no-such-package"))
                .isInstanceOf(ServerException.class)
                .hasMessageStartingWith("cerberus-no-such-server was not found on the PATH")
                .hasMessageContaining("install it with: apt-get install -y cerberus-no-such-package");
    }
}
