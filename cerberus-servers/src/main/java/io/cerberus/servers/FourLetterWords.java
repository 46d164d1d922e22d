package io.cerberus.servers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * ZooKeeper's four-letter words on a loopback client port: the one way this module asks a
 * ZooKeeper server how it is ({@code ruok}), what it is ({@code srvr}: its mode, leader, follower
 * or standalone) and what it holds ({@code mntr}). The server closes the connection after its
 * answer; a server that is down, paused or not serving gives an empty answer, never an exception,
 * so callers can poll with {@link Await}. The words must be in the server's
 * {@code 4lw.commands.whitelist}, as they are in the servers this module starts. Thread-safe.
 */
public final class FourLetterWords {
    private static final int ANSWER_MILLIS = 2_000;

    private FourLetterWords() {}

    /**
     * @param port the server's client port on 127.0.0.1
     * @param word four lower-case letters, e.g. {@code srvr}
     * @return the server's whole answer; empty when it does not answer within 2 s
     * @throws IllegalArgumentException if {@code word} is not four lower-case letters
     */
    public static String ask(int port, String word) {
        if (word == null || !word.matches("[a-z]{4}")) {
            throw new IllegalArgumentException(
                    "a four-letter word must be four lower-case letters, was '" + word + "'");
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), ANSWER_MILLIS);
            socket.setSoTimeout(ANSWER_MILLIS);
            socket.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * @param port the server's client port
     * @return whether it answers {@code ruok} with {@code imok} (it runs; it may not serve yet)
     */
    public static boolean ruok(int port) {
        return ask(port, "ruok").equals("imok");
    }

    /**
     * @param port the server's client port
     * @return the lines of {@code srvr} by name ({@code Mode}, {@code Received}, {@code Node count},
     *     {@code Zookeeper version}, ...); empty when it does not serve
     */
    public static Map<String, String> srvr(int port) {
        return lines(ask(port, "srvr"), ": ");
    }

    /**
     * @param port the server's client port
     * @return the statistics of {@code mntr} by name ({@code zk_server_state},
     *     {@code zk_approximate_data_size}, ...); empty when it does not serve
     */
    public static Map<String, String> mntr(int port) {
        return lines(ask(port, "mntr"), "\t");
    }

    /**
     * @param port the server's client port
     * @return its {@code Mode} from {@code srvr}: {@code leader}, {@code follower} or
     *     {@code standalone}; empty when it does not serve (down, paused, or a member without a quorum)
     */
    public static Optional<String> mode(int port) {
        return Optional.ofNullable(srvr(port).get("Mode"));
    }

    private static Map<String, String> lines(String answer, String separator) {
        Map<String, String> values = new LinkedHashMap<>();
        answer.lines().forEach(line -> {
            int at = line.indexOf(separator);
            if (at > 0) {
                values.put(
                        line.substring(0, at).strip(),
                        line.substring(at + separator.length()).strip());
            }
        });
        return values;
    }
}
