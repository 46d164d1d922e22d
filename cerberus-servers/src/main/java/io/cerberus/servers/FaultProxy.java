package io.cerberus.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on a loopback port that forwards to a server and can cut one client off from it,
 * while other clients reach the server directly: the portable way to partition a process.
 *
 * <ul>
 *   <li>{@link Mode#PASS}: bytes flow both ways;</li>
 *   <li>{@link Mode#DROP}: every connection is reset and new ones are refused at once (a server
 *       that went away, or a firewall that rejects);</li>
 *   <li>{@link Mode#BLACKHOLE}: connections stay open but no byte passes either way, and new
 *       connections are accepted and ignored (a partition: the client learns nothing until its
 *       own timeouts fire);</li>
 *   <li>{@link Mode#DELAY}: each chunk passes {@link #delay(long)} milliseconds after it arrived,
 *       in each direction (latency, not a slower pipe: chunks in flight together wait together).</li>
 * </ul>
 *
 * Each change of mode is counted ({@link #changes()}), and so is each chunk that passed in
 * {@link Mode#DELAY}, per direction ({@link #delayedUp()}, {@link #delayedDown()}), so a test can
 * show the fault happened and met traffic.
 * Thread-safe. Four threads per connection; meant for a handful of connections.
 */
public final class FaultProxy implements AutoCloseable {
    /** What the proxy does with traffic. */
    public enum Mode {
        PASS,
        DROP,
        BLACKHOLE,
        DELAY
    }

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong delayedUp = new AtomicLong();
    private final AtomicLong delayedDown = new AtomicLong();
    private final Object gate = new Object();
    private volatile Mode mode = Mode.PASS;
    private volatile long delayMillis;
    private volatile boolean closed;

    private FaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a proxy to {@code host:port} on a free loopback port.
     *
     * @param host the server host
     * @param port the server port
     * @return the running proxy, in {@link Mode#PASS}
     * @throws ServerException if no loopback port can be opened for it
     */
    public static FaultProxy start(String host, int port) {
        try {
            return new FaultProxy(new InetSocketAddress(host, port));
        } catch (IOException e) {
            throw new ServerException("cannot open a loopback port for a proxy to " + host + ":" + port + ": " + e, e);
        }
    }

    /** @return the loopback port clients connect to instead of the server's */
    public int port() {
        return listener.getLocalPort();
    }

    /** @return the current mode */
    public Mode mode() {
        return mode;
    }

    /** @return how many times the mode changed */
    public long changes() {
        return changes.get();
    }

    /** @return how many chunks from the clients to the server passed in {@link Mode#DELAY} */
    public long delayedUp() {
        return delayedUp.get();
    }

    /** @return how many chunks from the server to the clients passed in {@link Mode#DELAY} */
    public long delayedDown() {
        return delayedDown.get();
    }

    /**
     * Changes what the proxy does; {@link Mode#DROP} resets every open connection at once.
     *
     * @param next the new mode
     */
    public void mode(Mode next) {
        mode = next;
        changes.incrementAndGet();
        if (next == Mode.DROP) {
            for (Socket socket : sockets) {
                reset(socket);
            }
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    /**
     * Switches to {@link Mode#DELAY}.
     *
     * @param millis the delay per chunk forwarded
     */
    public void delay(long millis) {
        delayMillis = millis;
        mode(Mode.DELAY);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            if (mode == Mode.DROP) {
                reset(client);
                continue;
            }
            sockets.add(client);
            try {
                Socket server = new Socket();
                server.connect(target, 5_000);
                sockets.add(server);
                pump(client, server, "up", delayedUp);
                pump(server, client, "down", delayedDown);
            } catch (IOException e) {
                reset(client);
            }
        }
    }

    /**
     * Forwards one direction with two threads: a reader that stamps each chunk when it arrives, and
     * a writer that passes it on when the mode lets it — in {@link Mode#DELAY}, the delay after its
     * arrival, so chunks in flight together are delayed together, as on a slow link, not one after
     * another.
     */
    private void pump(Socket from, Socket to, String direction, AtomicLong delayed) {
        BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        Thread reader = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream()) {
                        int read;
                        while ((read = in.read(buffer)) >= 0) {
                            chunks.add(new Chunk(Arrays.copyOf(buffer, read), System.nanoTime()));
                        }
                    } catch (IOException e) {
                        // one side closed or was reset
                    } finally {
                        chunks.add(Chunk.END);
                    }
                },
                "fault-proxy-" + port() + "-" + direction + "-in");
        Thread writer = new Thread(
                () -> {
                    try (OutputStream out = to.getOutputStream()) {
                        Chunk chunk;
                        while ((chunk = chunks.take()) != Chunk.END && await(chunk.arrivedNanos(), delayed)) {
                            out.write(chunk.bytes());
                            out.flush();
                        }
                    } catch (IOException e) {
                        // one side closed or was reset
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        reset(from);
                        reset(to);
                    }
                },
                "fault-proxy-" + port() + "-" + direction + "-out");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    /** Bytes read from one side, and when. */
    private record Chunk(byte[] bytes, long arrivedNanos) {
        static final Chunk END = new Chunk(new byte[0], 0);
    }

    /** Holds a chunk while blackholed, delays it (and counts it) when delaying; false when it must be dropped. */
    private boolean await(long arrivedNanos, AtomicLong delayed) {
        while (true) {
            Mode now = mode;
            switch (now) {
                case PASS:
                    return true;
                case DROP:
                    return false;
                case DELAY:
                    delayed.incrementAndGet();
                    long wait = arrivedNanos + TimeUnit.MILLISECONDS.toNanos(delayMillis) - System.nanoTime();
                    if (wait > 0) {
                        try {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return false;
                        }
                    }
                    return !closed;
                default:
                    synchronized (gate) {
                        if (mode == Mode.BLACKHOLE && !closed) {
                            try {
                                gate.wait(100);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                return false;
                            }
                        }
                    }
                    if (closed) {
                        return false;
                    }
            }
        }
    }

    private void reset(Socket socket) {
        sockets.remove(socket);
        try {
            socket.setSoLinger(true, 0); // RST, not FIN
        } catch (SocketException e) {
            // already closed
        }
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket socket : sockets) {
            reset(socket);
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    @Override
    public String toString() {
        return "FaultProxy[127.0.0.1:" + port() + " -> " + target + ", " + mode + "]";
    }
}
