package io.cerberus.servers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on the loopback interface, for the servers this JVM starts. A port is picked at
 * random below the kernel's ephemeral range and is handed out once on this machine: never twice
 * by one JVM, and never by two JVMs alive at once, each of which claims its ports by locking the
 * port's byte of one file ({@code <java.io.tmpdir>/cerberus-ports-<user>.lock}) until it exits. So
 * a server that restarts on its port never finds it taken by another JVM's server started
 * meanwhile (a client of the restarted server would be talking to that one). Where the file
 * cannot be opened or locked, ports are kept apart within the JVM only. Thread-safe.
 */
public final class FreePorts {
    private static final int LOWEST = 15_000;
    /** Ports handed out by this JVM, or seen claimed by another. */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();
    /** The file whose byte at a port's offset a JVM locks to claim the port; null when it cannot be opened. */
    private static final FileChannel CLAIMS = claims();

    private FreePorts() {}

    /**
     * A port below the kernel's ephemeral range: a port taken from that range (port 0) can be
     * taken again, between our check and the server's bind, as the source port of some outgoing
     * connection (one cluster member dialling another), and the server then fails to start.
     *
     * @return a loopback port that was free a moment ago, is outside the ephemeral range, was not
     *     handed out before by this JVM and is not held by another
     * @throws ServerException if 1000 random ports in a row were taken
     */
    public static int next() {
        int high = Math.max(LOWEST + 1_000, ephemeralLow() - 1);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = random.nextInt(LOWEST, high);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port) && claim(port)) {
                return port;
            }
        }
        throw new ServerException("no free loopback port in " + LOWEST + "-" + high + " after 1000 tries;"
                + " see what holds them with: ss -ltn");
    }

    /**
     * Claims the port for this JVM's lifetime against every other JVM on the machine that uses
     * this class (another test fork, a child JVM): an exclusive lock on the port's byte of the
     * claims file, which the kernel drops when the JVM ends, however it ends.
     *
     * @return whether this JVM holds the port's lock now (true as well where files cannot be locked)
     */
    private static boolean claim(int port) {
        if (CLAIMS == null) {
            return true;
        }
        // an interrupt during a channel's call closes the channel, and with it every claim: take it off meanwhile
        boolean interrupted = Thread.interrupted();
        try {
            return CLAIMS.tryLock(port, 1, false) != null;
        } catch (IOException e) {
            return true; // no locks on this file system: ports are kept apart within this JVM only
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return this user's claims file, open for the JVM's lifetime, or null if it cannot be opened */
    private static FileChannel claims() {
        Path file = Path.of(
                System.getProperty("java.io.tmpdir"), "cerberus-ports-" + System.getProperty("user.name") + ".lock");
        try {
            return FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            return null;
        }
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
            // not Files.readString: on Java 17 it reads a /proc file, of size 0, as its first byte only
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0)
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
