package io.cerberus.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The demo's shared inventory: a file holding one number, the items left. Each write replaces the
 * file atomically (write a temporary file, rename it over), so a reader never sees a half-written
 * number; but a sale is a separate read, check and write, so two buyers that read the same number
 * both sell the same item. That race is the point of the demo: only the lock around
 * {@link #trySell()} makes a sale safe.
 */
final class StockFile {
    private final Path file;

    StockFile(Path file) {
        this.file = file;
    }

    /**
     * Creates (or overwrites) the store.
     *
     * @param file where
     * @param items the initial stock
     * @return the store
     */
    static StockFile create(Path file, int items) {
        StockFile stock = new StockFile(file);
        stock.write(items);
        return stock;
    }

    /** @return the items left now */
    int read() {
        try {
            return Integer.parseInt(
                    Files.readString(file, StandardCharsets.UTF_8).strip());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the stock from " + file, e);
        }
    }

    /**
     * One purchase, deliberately not atomic: read the stock; if an item is left, check the
     * payment (about a millisecond, during which other buyers may read the same stock), then
     * write the stock less one.
     *
     * @return whether an item was sold
     * @throws InterruptedException if interrupted during the payment check
     */
    boolean trySell() throws InterruptedException {
        int left = read();
        if (left <= 0) {
            return false;
        }
        Thread.sleep(1);
        write(left - 1);
        return true;
    }

    private void write(int items) {
        try {
            Path next = Files.createTempFile(file.getParent(), "stock-", ".tmp");
            Files.writeString(next, Integer.toString(items), StandardCharsets.UTF_8);
            Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the stock to " + file, e);
        }
    }
}
