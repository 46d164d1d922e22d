package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs ZooKeeper's server from the test class path (a test dependency of this module). */
class ZooKeeperServerTest {

    @Test
    void startsStandaloneAndAnswersTheFourLetterWords() {
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            assertThat(server.uri()).isEqualTo("zk://127.0.0.1:" + server.port());
            assertThat(server.mode()).hasValue("standalone");
            assertThat(FourLetterWords.ruok(server.port())).isTrue();
            assertThat(server.srvr()).containsKeys("Received", "Node count");
            assertThat(server.mntr()).containsEntry("zk_server_state", "standalone");
            assertThat(server.version()).matches("\\d+\\.\\d+\\.\\d+");
        }
    }

    @Test
    void aKilledServerRestartsOnTheSamePortAndDataDirectory(@TempDir Path dir) throws Exception {
        try (ZooKeeperServer server = ZooKeeperServer.builder()
                .dir(dir)
                .tickTime(Duration.ofMillis(100))
                .start()) {
            assertThat(Files.readString(dir.resolve("zoo.cfg")))
                    .contains(
                            "tickTime=100",
                            "minSessionTimeout=200",
                            "admin.enableServer=false",
                            "4lw.commands.whitelist=ruok,srvr,mntr")
                    .doesNotContain("forceSync");
            assertThat(dir.resolve("data/version-2")).as("its data directory").isDirectory();
            long pid = server.pid();
            server.kill();
            assertThat(server.isRunning()).isFalse();
            assertThat(server.mode()).isEmpty();
            server.restart();
            assertThat(server.pid()).isNotEqualTo(pid);
            assertThat(FourLetterWords.mode(server.port())).hasValue("standalone");
        }
        assertThat(dir).as("a directory the caller gave is kept").isDirectory();
    }

    @Test
    void aPausedServerAnswersNothingUntilResumedOrHealed() {
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            server.pause();
            assertThat(FourLetterWords.srvr(server.port())).isEmpty();
            server.heal();
            assertThat(server.isPaused()).isFalse();
            assertThat(FourLetterWords.mode(server.port())).hasValue("standalone");
        }
    }

    @Test
    void aClassPathWithoutZooKeeperFailsNamingTheMainClass() {
        assertThatThrownBy(() ->
                        ZooKeeperServer.builder().classPath("/no/such.jar").start())
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("org.apache.zookeeper.server.quorum.QuorumPeerMain")
                .hasMessageContaining("/no/such.jar");
    }

    @Test
    void badSettingsAreRefusedNamingTheRule() {
        assertThatThrownBy(() -> ZooKeeperServer.builder().tickTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tickTime must be at least 1ms");
        assertThatThrownBy(
                        () -> ZooKeeperServer.builder().sessionTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("min <= max");
        assertThatThrownBy(() -> FourLetterWords.ask(1, "stat!"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("four lower-case letters");
    }
}
