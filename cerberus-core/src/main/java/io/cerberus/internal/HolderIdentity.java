package io.cerberus.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Describes this process for {@code inspect}: {@code pid@host}. Never used for ownership. */
final class HolderIdentity {
    private static final String PROCESS = ProcessHandle.current().pid() + "@" + hostName();

    private HolderIdentity() {}

    /** The last description per thread, made again only when the thread is renamed: taken on every acquisition. */
    private static final ThreadLocal<String[]> LAST = ThreadLocal.withInitial(() -> new String[2]);

    /** @return {@code pid@host thread-name} of the calling thread */
    static String describeCurrentThread() {
        String[] last = LAST.get();
        String name = Thread.currentThread().getName();
        if (!name.equals(last[0])) {
            last[0] = name;
            last[1] = PROCESS + " " + name;
        }
        return last[1];
    }

    /** @return {@code pid@host} of this process */
    static String describeProcess() {
        return PROCESS;
    }

    private static String hostName() {
        // InetAddress.getLocalHost() may wait on DNS; the kernel's host name is enough here.
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            return Files.readString(Path.of("/etc/hostname"), StandardCharsets.UTF_8)
                    .strip();
        } catch (IOException | RuntimeException e) {
            return "localhost";
        }
    }
}
