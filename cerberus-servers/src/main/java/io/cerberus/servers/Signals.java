package io.cerberus.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Sends signals through one long-lived {@code /bin/sh}, whose {@code kill} is a builtin: a signal
 * costs a line written to a pipe, not a process started per signal. On a busy machine starting
 * {@code kill} takes 10–200 ms, longer than a client holds a lock, so a pause aimed at a holder
 * landed after it had let go. One signal at a time (the shell answers in order); the shell is
 * started on first use and again if it ends. Every failure is a {@link ServerException}.
 */
final class Signals {
    private static final Pattern SIGNAL = Pattern.compile("[A-Z]+[0-9]*");
    private static final String DONE = "cerberus-signal-exit-code=";
    private static final long ANSWER_WITHIN_SECONDS = 10;

    private static Process shell;
    private static Writer commands;
    private static BlockingQueue<String> answers;

    private Signals() {}

    /**
     * @param signal the signal name without {@code SIG}: {@code STOP}, {@code CONT}, {@code KILL}, {@code TERM}
     * @param pid the process
     * @param name the process's name, for the message
     * @throws ServerException if the signal cannot be sent, say because the process has ended
     * @throws IllegalArgumentException if {@code signal} is not a signal name
     */
    static synchronized void send(String signal, long pid, String name) {
        if (!SIGNAL.matcher(signal).matches()) {
            throw new IllegalArgumentException("signal must be a name such as STOP, was '" + signal + "'");
        }
        try {
            if (shell == null || !shell.isAlive()) {
                start();
            }
            commands.write("kill -" + signal + " " + pid + " 2>&1; echo \"" + DONE + "$?\"\n");
            commands.flush();
            StringBuilder said = new StringBuilder();
            while (true) {
                String line = answers.poll(ANSWER_WITHIN_SECONDS, TimeUnit.SECONDS);
                if (line == null) {
                    shell.destroyForcibly();
                    throw new ServerException(
                            "kill -" + signal + " " + pid + " (" + name + ") got no answer from /bin/sh within "
                                    + ANSWER_WITHIN_SECONDS + " s" + (said.isEmpty() ? "" : ": " + said));
                }
                if (line.startsWith(DONE)) {
                    if (!line.equals(DONE + "0")) {
                        throw new ServerException("kill -" + signal + " " + pid + " (" + name + ") failed: "
                                + said.toString().strip());
                    }
                    return;
                }
                said.append(line).append(' ');
            }
        } catch (IOException e) {
            if (shell != null) {
                shell.destroyForcibly();
            }
            throw new ServerException("could not send SIG" + signal + " to " + name + " through /bin/sh", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerException("interrupted sending SIG" + signal + " to " + name, e);
        }
    }

    private static void start() throws IOException {
        shell = new ProcessBuilder("/bin/sh").redirectErrorStream(true).start();
        commands = new OutputStreamWriter(shell.getOutputStream(), StandardCharsets.UTF_8);
        BlockingQueue<String> queue = new LinkedBlockingQueue<>();
        answers = queue;
        BufferedReader output =
                new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.UTF_8));
        Thread reader = new Thread(
                () -> {
                    try {
                        for (String line = output.readLine(); line != null; line = output.readLine()) {
                            queue.add(line);
                        }
                    } catch (IOException e) {
                        // the shell ended: the next signal starts another
                    }
                },
                "signal-shell");
        reader.setDaemon(true);
        reader.start();
    }
}
