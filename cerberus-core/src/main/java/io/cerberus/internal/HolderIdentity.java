package io.cerberus.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Describes this process for {@code inspect}: {@code pid@host}. Never used for ownership. */
final class HolderIdentity {
    private static final String PROCESS = ProcessHandle.current().pid() + "@" + hostName();

    private HolderIdentity() {
    }

    static String describe(Thread thread) {
        return PROCESS + " " + thread.getName();
    }

    private static String hostName() {
        // InetAddress.getLocalHost() may wait on DNS; the kernel's host name is enough here.
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            return Files.readString(Path.of("/etc/hostname"), StandardCharsets.UTF_8).strip();
        } catch (IOException | RuntimeException e) {
            return "localhost";
        }
    }
}
