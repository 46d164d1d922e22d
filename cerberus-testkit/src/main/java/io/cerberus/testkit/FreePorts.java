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

    /** Ports handed out by this JVM, never handed out twice. */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A port below the kernel's ephemeral range: a port taken from that range (port 0) can be
     * taken again, between our check and the server's bind, as the source port of some outgoing
     * connection (one cluster member dialling another), and the server then fails to start.
     *
     * @return a loopback port that was free a moment ago and is outside the ephemeral range
     */
    public static int next() {
        int low = 15_000;
        int high = Math.max(low + 1_000, ephemeralLow() - 1);
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = random.nextInt(low, high);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port in " + low + "-" + high + " after 1000 tries");
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The lower bound of the kernel's ephemeral port range (32768 when it cannot be read). */
    private static int ephemeralLow() {
        try {
            String range = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
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
