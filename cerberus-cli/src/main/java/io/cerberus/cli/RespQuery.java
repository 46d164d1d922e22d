package io.cerberus.cli;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One command to a Redis or Sentinel on loopback in the Redis protocol (RESP2), on a connection of
 * its own: how the checker asks servers it kills about their state, with no client library whose
 * reconnection logic would outlive the question.
 */
final class RespQuery {
    private RespQuery() {
    }

    /**
     * Sends one command in the Redis protocol and flattens the reply (arrays into their elements).
     *
     * @return the reply's strings; empty when the server cannot be reached or answers an error
     */
    static List<String> send(int port, String... command) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(2000);
            StringBuilder request = new StringBuilder("*").append(command.length).append("\r\n");
            for (String part : command) {
                request.append('$').append(part.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(part).append("\r\n");
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

    /** @return false if the reply is an error */
    private static boolean read(InputStream in, List<String> into) throws IOException {
        String line = line(in);
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
