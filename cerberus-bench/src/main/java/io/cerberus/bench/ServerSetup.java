package io.cerberus.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the bench's SQL servers need to set up their data directories: as the server's own user when run as root. */
final class ServerSetup {
    private ServerSetup() {
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Gives {@code dir} to {@code user} (and its group) when the bench runs as root; else leaves it. */
    static void chownTo(Path dir, String user) throws IOException {
        if (isRoot()) {
            UserPrincipalLookupService lookup = dir.getFileSystem().getUserPrincipalLookupService();
            PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
            view.setOwner(lookup.lookupPrincipalByName(user));
            view.setGroup(lookup.lookupPrincipalByGroupName(user));
        }
    }

    /** Runs a set-up program to its end (at most 120 s), failing with its output when it fails. */
    static void run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("failed: " + String.join(" ", command) + "\n" + new String(output));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", command), e);
        }
    }
}
