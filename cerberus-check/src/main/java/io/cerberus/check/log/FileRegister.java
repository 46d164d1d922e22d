package io.cerberus.check.log;

import io.cerberus.Fence;
import io.cerberus.fencing.FencedFile;
import io.cerberus.fencing.StaleFenceException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A register in a file kept by {@link FencedFile}: its content is {@code VALUE ACCEPTED}, its fence in the file beside
 * it. A write reads the count it adds to under the writer's own fence, then writes: a newer holder that read or wrote
 * in between makes the write stale, so value and count change together.
 */
final class FileRegister implements Register {
    private final FencedFile file;
    private final Fence constant;

    /** @param constant the fence every operation carries instead of the holder's (the negative control), or null */
    FileRegister(Path path, Fence constant) {
        this.file = new FencedFile(path);
        this.constant = constant;
    }

    /** Creates the register at value 0, and forgets its fence. */
    void reset() {
        try {
            Files.deleteIfExists(file.file().resolveSibling(file.file().getFileName() + ".fence"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        file.write(new Fence(0, 0), State.EMPTY.text().getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public State read() {
        try {
            return State.parse(Files.readString(file.file(), StandardCharsets.US_ASCII));
        } catch (NoSuchFileException e) {
            return State.EMPTY;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the register " + file.file(), e);
        }
    }

    @Override
    public Optional<State> read(Fence fence) {
        try {
            return Optional.of(file.read(effective(fence))
                    .map(bytes -> State.parse(new String(bytes, StandardCharsets.US_ASCII)))
                    .orElse(State.EMPTY));
        } catch (StaleFenceException e) {
            return Optional.empty();
        }
    }

    @Override
    public boolean write(long value, Fence fence) {
        Fence writer = effective(fence);
        try {
            State before = file.read(writer)
                    .map(bytes -> State.parse(new String(bytes, StandardCharsets.US_ASCII)))
                    .orElse(State.EMPTY);
            file.write(writer, new State(value, before.accepted() + 1).text().getBytes(StandardCharsets.US_ASCII));
            return true;
        } catch (StaleFenceException e) {
            return false;
        }
    }

    private Fence effective(Fence fence) {
        return constant == null ? fence : constant;
    }
}
