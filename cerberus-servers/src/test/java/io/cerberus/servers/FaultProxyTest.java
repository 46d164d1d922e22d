package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FaultProxyTest {
    private ServerSocket echo;
    private FaultProxy proxy;

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket socket = echo.accept();
                    Thread pump = new Thread(() -> {
                        try (socket;
                                InputStream in = socket.getInputStream();
                                OutputStream out = socket.getOutputStream()) {
                            in.transferTo(out);
                        } catch (IOException e) {
                            // client gone
                        }
                    });
                    pump.setDaemon(true);
                    pump.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        proxy = FaultProxy.start("127.0.0.1", echo.getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", proxy.port());
        socket.setSoTimeout(2_000);
        return socket;
    }

    private static int roundTrip(Socket socket, int value) throws IOException {
        socket.getOutputStream().write(value);
        socket.getOutputStream().flush();
        return socket.getInputStream().read();
    }

    @Test
    void passForwardsBothWays() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 42)).isEqualTo(42);
        }
    }

    @Test
    void blackholeHoldsEveryByteUntilTheNetworkHeals() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 1)).isEqualTo(1);
            proxy.mode(FaultProxy.Mode.BLACKHOLE);
            socket.setSoTimeout(300);
            assertThatThrownBy(() -> roundTrip(socket, 2)).isInstanceOf(SocketTimeoutException.class);
            proxy.mode(FaultProxy.Mode.PASS);
            socket.setSoTimeout(2_000);
            assertThat(socket.getInputStream().read())
                    .as("the held byte arrives")
                    .isEqualTo(2);
            assertThat(proxy.changes()).isEqualTo(2);
        }
    }

    @Test
    void dropResetsOpenConnectionsAndRefusesNewOnes() throws IOException {
        try (Socket socket = connect()) {
            assertThat(roundTrip(socket, 1)).isEqualTo(1);
            proxy.mode(FaultProxy.Mode.DROP);
            assertThatThrownBy(() -> {
                        int read = roundTrip(socket, 2);
                        if (read < 0) {
                            throw new IOException("end of stream");
                        }
                    })
                    .as("a reset or an end of stream, not a time-out")
                    .isInstanceOf(IOException.class)
                    .isNotInstanceOf(java.net.SocketTimeoutException.class);
            try (Socket again = connect()) {
                assertThatThrownBy(() -> {
                            int read = roundTrip(again, 3);
                            if (read < 0) {
                                throw new IOException("end of stream");
                            }
                        })
                        .as("a reset or an end of stream, not a time-out")
                        .isInstanceOf(IOException.class)
                        .isNotInstanceOf(java.net.SocketTimeoutException.class);
            }
        }
    }

    @Test
    void delaySlowsEveryChunk() throws IOException {
        try (Socket socket = connect()) {
            proxy.delay(150);
            long start = System.nanoTime();
            assertThat(roundTrip(socket, 7)).isEqualTo(7);
            assertThat((System.nanoTime() - start) / 1_000_000)
                    .as("two hops of 150 ms")
                    .isGreaterThanOrEqualTo(300);
            assertThat(proxy.delayedUp()).as("the request passed delayed").isEqualTo(1);
            assertThat(proxy.delayedDown()).as("the reply passed delayed").isEqualTo(1);
            proxy.mode(FaultProxy.Mode.PASS);
            assertThat(roundTrip(socket, 8)).isEqualTo(8);
            assertThat(proxy.delayedUp() + proxy.delayedDown())
                    .as("chunks that passed freely are not counted")
                    .isEqualTo(2);
        }
    }

    @Test
    void delayIsLatencyNotASlowerPipe() throws IOException, InterruptedException {
        try (Socket socket = connect()) {
            proxy.delay(300);
            long start = System.nanoTime();
            OutputStream out = socket.getOutputStream();
            for (int i = 1; i <= 5; i++) { // five requests in flight together, as a pipelining client sends them
                out.write(i);
                out.flush();
                Thread.sleep(20);
            }
            for (int i = 1; i <= 5; i++) {
                assertThat(socket.getInputStream().read()).isEqualTo(i);
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(millis).as("two hops of 300 ms, not five times two").isBetween(600L, 1_500L);
        }
    }
}
