package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Needs redis-server installed: a missing one fails with the package to install (apt-get install -y redis-server). */
class RedisServerTest {

    @Test
    void startsOnAFreePortWithoutPersistence() throws IOException {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
            assertThat(send(server.port(), "PING")).isEqualTo("+PONG");
            assertThat(send(server.port(), "CONFIG", "GET", "appendonly")).contains("no");
        }
    }

    @Test
    void extraArgumentsComeLastAndWin() throws IOException {
        try (RedisServer server = RedisServer.start("--requirepass", "s3cret")) {
            assertThat(send(server.port(), "PING")).startsWith("-NOAUTH");
            assertThat(send(server.port(), "AUTH", "s3cret")).isEqualTo("+OK");
        }
    }

    @Test
    void killEmptiesItAndRestartBringsItBackOnTheSamePort() throws IOException {
        try (RedisServer server = RedisServer.start()) {
            assertThat(send(server.port(), "SET", "k", "v")).isEqualTo("+OK");
            server.kill();
            assertThat(server.isRunning()).isFalse();
            assertThat(FreePorts.accepts(server.port())).isFalse();
            server.restart();
            assertThat(send(server.port(), "DBSIZE")).isEqualTo(":0");
        }
    }

    @Test
    void anAppendOnlyFileKeepsWritesAcrossAKill(@TempDir Path dir) throws IOException {
        Path output = dir.resolve("server.out");
        try (RedisServer server = RedisServer.builder()
                .persistence(RedisServer.Persistence.AOF_ALWAYS)
                .dir(dir)
                .output(output)
                .start()) {
            assertThat(send(server.port(), "SET", "k", "v")).isEqualTo("+OK");
            server.kill();
            server.restart();
            assertThat(send(server.port(), "DBSIZE")).isEqualTo(":1");
        }
        assertThat(Files.readString(output)).contains("Ready to accept connections");
    }

    @Test
    void persistenceNeedsADirectory() {
        assertThatThrownBy(() -> RedisServer.builder()
                        .persistence(RedisServer.Persistence.AOF_ALWAYS)
                        .start())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a dir");
    }

    @Test
    void aSentinelKeepsNoData(@TempDir Path dir) {
        assertThatThrownBy(() -> RedisServer.builder()
                        .sentinel(dir.resolve("sentinel.conf"))
                        .dir(dir)
                        .persistence(RedisServer.Persistence.AOF_ALWAYS)
                        .start())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a Sentinel keeps no data");
    }

    @Test
    void aPausedServerAnswersNothingUntilResumed() throws IOException {
        try (RedisServer server = RedisServer.start()) {
            server.pause();
            assertThat(server.isPaused()).isTrue();
            assertThatThrownBy(() -> send(server.port(), "PING")).isInstanceOf(SocketTimeoutException.class);
            server.resume();
            assertThat(send(server.port(), "PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void aServerThatCannotStartFailsAtOnceWithItsOutput() {
        long started = System.nanoTime();
        assertThatThrownBy(() -> RedisServer.builder()
                        .args("--no-such-directive", "x")
                        .startTimeout(Duration.ofMinutes(1))
                        .start())
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("ended while waiting for redis-server")
                .hasMessageContaining("Bad directive");
        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .as("not the whole minute")
                .isLessThan(Duration.ofSeconds(30));
    }

    /** Sends one command in RESP and returns the first line of the answer (the value of a bulk answer). */
    private static String send(int port, String... words) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(1000);
            StringBuilder request = new StringBuilder("*" + words.length + "\r\n");
            for (String word : words) {
                request.append('$')
                        .append(word.length())
                        .append("\r\n")
                        .append(word)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String first = in.readLine();
            if (first.startsWith("*")) {
                StringBuilder values = new StringBuilder();
                for (int i = 0; i < Integer.parseInt(first.substring(1)); i++) {
                    in.readLine();
                    values.append(in.readLine()).append(' ');
                }
                return values.toString().strip();
            }
            return first;
        }
    }
}
