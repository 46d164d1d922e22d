package io.cerberus.check.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The external effect of {@code cerberus check --idempotency}: a file outside the engine that an
 * operation appends one line to when it takes effect ({@code KEY SUBMISSION CLIENT PAYLOAD NANOS}).
 * Each append is one write under an OS file lock, so lines of several processes never interleave,
 * and a process killed with SIGKILL right after an append leaves it whole (the page cache outlives
 * the process). The ledger is the truth the judge counts effects from: the clients' own logs may
 * miss the line after an effect when they are killed.
 */
public final class EffectLedger implements AutoCloseable {
    /** One applied effect. */
    public record Effect(long key, String submission, String client, String payload, long nanos) {
        static Effect parse(String line) {
            String[] parts = line.split(" ");
            if (parts.length != 5) {
                throw new IllegalArgumentException("not a ledger line: '" + line + "'");
            }
            return new Effect(Long.parseLong(parts[0]), parts[1], parts[2], parts[3], Long.parseLong(parts[4]));
        }
    }

    private final FileChannel channel;

    public EffectLedger(Path file) {
        try {
            this.channel = FileChannel.open(
                    file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the effect ledger " + file, e);
        }
    }

    /**
     * Applies one effect: appends its line atomically.
     *
     * @param key the operation's key
     * @param submission the submission that applies it
     * @param client the client that applies it
     * @param payload {@code ok}, or {@code other} for a submission that reuses the key with another payload
     */
    public synchronized void apply(long key, String submission, String client, String payload) {
        byte[] line = (key + " " + submission + " " + client + " " + payload + " " + System.nanoTime() + "\n")
                .getBytes(StandardCharsets.UTF_8);
        try {
            FileLock lock = channel.lock();
            try {
                ByteBuffer buffer = ByteBuffer.wrap(line);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            } finally {
                lock.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to the effect ledger", e);
        }
    }

    /** @return the effects in the ledger, in the order applied; a last line not yet ended is left out */
    public static List<Effect> read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        List<Effect> effects = new ArrayList<>();
        for (String line : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
            if (!line.isBlank()) {
                effects.add(Effect.parse(line));
            }
        }
        return effects;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the effect ledger", e);
        }
    }
}
