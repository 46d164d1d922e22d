package io.cerberus.servers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on the loopback interface, for the servers this JVM starts. A port is picked at
 * random below the kernel's ephemeral range and is never handed out twice by one JVM, so two
 * servers started side by side never get the same one. Thread-safe.
 */
public final class FreePorts {
    private static final int LOWEST = 15_000;
    /** Ports handed out by this JVM. */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {}

    /**
     * A port below the kernel's ephemeral range: a port taken from that range (port 0) can be
     * taken again, between our check and the server's bind, as the source port of some outgoing
     * connection (one cluster member dialling another), and the server then fails to start.
     *
     * @return a loopback port that was free a moment ago, is outside the ephemeral range, and was
     *     not handed out before by this JVM
     * @throws ServerException if 1000 random ports in a row were taken
     */
    public static int next() {
        int high = Math.max(LOWEST + 1_000, ephemeralLow() - 1);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = random.nextInt(LOWEST, high);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new ServerException("no free loopback port in " + LOWEST + "-" + high + " after 1000 tries;"
                + " see what holds them with: ss -ltn");
    }

    /** @return whether a server could bind the loopback port now (a socket binds and closes it) */
    static boolean bindable(int port) {
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
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    /**
     * @param port a loopback port
     * @return whether something accepts connections on it (within 200 ms)
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
     * @throws ServerException if the deadline passes first
     */
    public static void awaitAccepting(int port, Duration timeout, String what) {
        Await.until(what + " to accept connections on 127.0.0.1:" + port, timeout, () -> accepts(port));
    }
}
