package io.cerberus.servers;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One command to a Redis server or Sentinel on loopback in the Redis protocol (RESP2), on a
 * connection of its own: how this module and {@code cerberus check} ask servers they kill and pause
 * about their state, with no client library whose reconnection logic would outlive the question.
 * A server that cannot be reached, does not answer within 2 s or answers an error gives an empty
 * reply, so a caller polls with {@link Await} until the answer is the one it waits for. Thread-safe.
 */
public final class RespQuery {
    private RespQuery() {}

    /**
     * Sends one command and flattens the reply (arrays into their elements, in order).
     *
     * @param port the loopback port of the server
     * @param command the command and its arguments, e.g. {@code "INFO", "replication"}
     * @return the reply's strings; empty when the server cannot be reached, does not answer in
     *     time, or answers an error
     */
    public static List<String> send(int port, String... command) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
            socket.setSoTimeout(2000);
            StringBuilder request =
                    new StringBuilder("*").append(command.length).append("\r\n");
            for (String part : command) {
                request.append('$')
                        .append(part.getBytes(StandardCharsets.UTF_8).length)
                        .append("\r\n")
                        .append(part)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            List<String> reply = new ArrayList<>();
            return read(new BufferedInputStream(socket.getInputStream()), reply) ? reply : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * Sends one command whose reply is one text, such as {@code INFO} or {@code CLUSTER NODES}.
     *
     * @param port the loopback port of the server
     * @param command the command and its arguments
     * @return the reply's strings joined by line breaks; empty as for {@link #send}
     */
    public static String text(int port, String... command) {
        return String.join("\n", send(port, command));
    }

    /**
     * @param flat a flattened reply of field names and values, such as {@code SENTINEL MASTER}'s
     * @param name a field name
     * @return the value after the first {@code name}, or empty if there is none
     */
    public static String field(List<String> flat, String name) {
        int at = flat.indexOf(name);
        return at >= 0 && at + 1 < flat.size() ? flat.get(at + 1) : "";
    }

    /** @return false if the reply is an error */
    private static boolean read(InputStream in, List<String> into) throws IOException {
        String line = line(in);
        if (line.isEmpty()) {
            return false;
        }
        switch (line.charAt(0)) {
            case '+', ':' -> into.add(line.substring(1));
            case '$' -> {
                int length = Integer.parseInt(line.substring(1));
                if (length >= 0) {
                    into.add(new String(in.readNBytes(length), StandardCharsets.UTF_8));
                    line(in);
                }
            }
            case '*' -> {
                int count = Integer.parseInt(line.substring(1));
                for (int i = 0; i < count; i++) {
                    if (!read(in, into)) {
                        return false;
                    }
                }
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("the reply ended early");
            }
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }
}
