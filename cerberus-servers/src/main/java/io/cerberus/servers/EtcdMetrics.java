package io.cerberus.servers;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.OptionalDouble;

/**
 * Reads an etcd member's {@code /health} and Prometheus {@code /metrics} over plain HTTP on its
 * metrics port (a port of its own, so the same whatever the client port speaks, TLS included): the
 * one way this module asks etcd how it is. A GET is a blocking socket with HTTP/1.0, not
 * {@link java.net.http.HttpClient}: the bench reads the metrics around every measured slice, and
 * the HttpClient's future chains and selector code, the same JDK code the measured clients run
 * hot, made the JIT throw their compiled code away after each read. A member that does not answer
 * gives an empty text, never an exception, so callers can poll with {@link Await}. Thread-safe.
 */
final class EtcdMetrics {
    private static final int CONNECT_MILLIS = 2_000;
    private static final int ANSWER_MILLIS = 5_000;

    private EtcdMetrics() {}

    /**
     * @param port the member's metrics port on 127.0.0.1
     * @param path e.g. {@code /health}
     * @return the body of a 200 answer; empty for any other answer or none
     */
    static String get(int port, String path) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), CONNECT_MILLIS);
            socket.setSoTimeout(ANSWER_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = response.indexOf(' ') + 1;
            int body = response.indexOf("\r\n\r\n");
            return response.startsWith("HTTP/1.") && response.startsWith("200 ", status) && body >= 0
                    ? response.substring(body + 4)
                    : "";
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * @param metrics Prometheus text
     * @param prefix the start of the lines to add up: a metric's name followed by a space for the
     *     one line without labels, or by {@code {} and the first labels for some of its lines
     * @return the sum of the values of the lines that start with {@code prefix}; empty when none does
     * @throws NumberFormatException if such a line does not end in a number
     */
    static OptionalDouble sum(String metrics, String prefix) {
        double sum = 0;
        boolean found = false;
        int start = 0;
        while (start < metrics.length()) {
            int end = metrics.indexOf('\n', start);
            if (end < 0) {
                end = metrics.length();
            }
            if (metrics.startsWith(prefix, start)) {
                sum += Double.parseDouble(metrics.substring(metrics.lastIndexOf(' ', end - 1) + 1, end)
                        .strip());
                found = true;
            }
            start = end + 1;
        }
        return found ? OptionalDouble.of(sum) : OptionalDouble.empty();
    }
}
