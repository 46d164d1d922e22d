package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Needs memcached installed: a missing one fails with the package to install (apt-get install -y memcached). */
class MemcachedServerTest {

    @Test
    void startsOnAFreePortAndAnswersStats() {
        try (MemcachedServer server = MemcachedServer.builder().memoryMb(16).start()) {
            assertThat(server.uri()).isEqualTo("memcached://127.0.0.1:" + server.port());
            assertThat(server.stats()).containsKey("pid").containsEntry("limit_maxbytes", Long.toString(16L << 20));
            assertThat(server.items()).isZero();
            assertThat(server.command()).contains("-M", "-U").doesNotContain("-C");
        }
    }

    @Test
    void evictionsAndCasAreOptions() {
        MemcachedServer.Builder noCas = MemcachedServer.builder().cas(false);
        try (MemcachedServer server = noCas.start();
                MemcachedServer evicting =
                        MemcachedServer.builder().evictions(true).start()) {
            assertThat(server.command()).contains("-M", "-C");
            assertThat(evicting.command()).doesNotContain("-M", "-C");
        }
    }

    @Test
    void killEmptiesItAndRestartBringsItBackOnTheSamePort() throws IOException {
        try (MemcachedServer server = MemcachedServer.start()) {
            set(server.port(), "k", "v");
            assertThat(server.items()).isEqualTo(1);
            server.kill();
            assertThat(server.isRunning()).isFalse();
            assertThat(FreePorts.accepts(server.port())).isFalse();
            assertThatThrownBy(server::stats)
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("did not answer 'stats'");
            server.restart();
            assertThat(server.isRunning()).isTrue();
            assertThat(server.items()).as("memcached keeps nothing").isZero();
        }
    }

    @Test
    void aPausedServerAnswersNothingUntilResumed() {
        try (MemcachedServer server = MemcachedServer.start()) {
            server.pause();
            assertThat(server.isPaused()).isTrue();
            assertThatThrownBy(server::stats).isInstanceOf(ServerException.class);
            server.resume();
            assertThat(server.isPaused()).isFalse();
            assertThat(server.items()).isZero();
        }
    }

    @Test
    void outputGoesToTheGivenFile(@TempDir Path dir) {
        Path output = dir.resolve("memcached.out");
        try (MemcachedServer server = MemcachedServer.builder().output(output).start()) {
            assertThat(server.isRunning()).isTrue();
            assertThat(Files.exists(output)).isTrue();
        }
    }

    @Test
    void aServerThatCannotStartFailsAtOnceWithItsOutput() throws IOException {
        int port = FreePorts.next();
        try (ServerSocket taken = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
            assertThat(taken.isBound()).isTrue();
            long started = System.nanoTime();
            assertThatThrownBy(() -> MemcachedServer.builder()
                            .port(port)
                            .startTimeout(Duration.ofMinutes(1))
                            .start())
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("ended while waiting for memcached on 127.0.0.1:" + port)
                    .hasMessageContaining("failed to listen");
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .as("not the whole minute")
                    .isLessThan(Duration.ofSeconds(30));
        }
    }

    private static void set(int port, String key, String value) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(new String(socket.getInputStream().readNBytes(8), StandardCharsets.US_ASCII))
                    .isEqualTo("STORED\r\n");
        }
    }
}
