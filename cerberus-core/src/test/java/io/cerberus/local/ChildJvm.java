package io.cerberus.local;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link FileLockChild} in its own JVM: send it commands, await its answers with deadlines. */
final class ChildJvm implements AutoCloseable {
    static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));
    private static final String EOF = "\u0000eof";

    private final Process process;
    private final Path stderr;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();

    private ChildJvm(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread pump = new Thread(this::pump, "stdout-of-child-" + process.pid());
        pump.setDaemon(true);
        pump.start();
    }

    /** Starts a child client of {@code uri} in {@code namespace} and waits until it is ready. */
    static ChildJvm start(String uri, String namespace) throws IOException {
        Path stderr = Files.createTempFile("cerberus-file-child-", ".stderr.log");
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), FileLockChild.class.getName(), uri, namespace)
                .redirectError(stderr.toFile())
                .start();
        ChildJvm child = new ChildJvm(process, stderr);
        child.await("READY", 20_000);
        return child;
    }

    static Duration scaled(long millis) {
        return Duration.ofMillis((long) (millis * SCALE));
    }

    long pid() {
        return process.pid();
    }

    /** Sends a command and returns the answer line. */
    String ask(String command) {
        send(command);
        return next(10_000);
    }

    /** Sends {@code LOCK mode name} and returns the fencing token of the hold. */
    long lock(String mode, String name) {
        send("LOCK " + mode + " " + name);
        String line = next(10_000);
        if (!line.startsWith("ACQUIRED ")) {
            throw new AssertionError("child answered '" + line + "' to LOCK" + diagnostics());
        }
        return Long.parseLong(line.substring("ACQUIRED ".length()));
    }

    void send(String command) {
        try {
            stdin.write(command + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("could not write to the child" + diagnostics(), e);
        }
    }

    private void await(String expected, long millis) {
        String line = next(millis);
        if (!line.equals(expected)) {
            throw new AssertionError("child printed '" + line + "', expected '" + expected + "'" + diagnostics());
        }
    }

    private String next(long millis) {
        Duration timeout = scaled(millis);
        try {
            String line = lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("child printed nothing within " + timeout.toMillis() + "ms" + diagnostics());
            }
            if (line.equals(EOF)) {
                lines.add(EOF);
                throw new AssertionError("child ended" + diagnostics());
            }
            seen.add(line);
            return line;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for the child", e);
        }
    }

    /** Kills the child with SIGKILL and waits until it is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(scaled(10_000).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the killed child did not end" + diagnostics());
        }
    }

    private void pump() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // the child ended; EOF tells the reader
        } finally {
            lines.add(EOF);
        }
    }

    private String diagnostics() {
        String errors;
        try {
            errors = Files.readString(stderr, StandardCharsets.UTF_8);
        } catch (IOException e) {
            errors = "(unreadable: " + e + ")";
        }
        return "\n  child stdout so far: " + seen + "\n  child stderr:\n" + errors;
    }

    @Override
    public void close() throws IOException {
        process.destroyForcibly();
        try {
            process.waitFor(scaled(10_000).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(stderr);
    }
}
