package io.cerberus.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/** Free TCP ports on the loopback interface, for servers started by tests. */
public final class FreePorts {
    private FreePorts() {
    }

    /** @return a loopback port that was free a moment ago */
    public static int next() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("could not find a free loopback port", e);
        }
    }

    /**
     * @param port a loopback port
     * @return whether something accepts connections on it
     */
    public static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Waits until a server accepts connections on the port.
     *
     * @param port the port
     * @param timeout the deadline
     * @param what the server, for the failure message
     */
    public static void awaitAccepting(int port, Duration timeout, String what) {
        Poll.until(what + " to accept connections on 127.0.0.1:" + port, timeout, () -> accepts(port));
    }
}
