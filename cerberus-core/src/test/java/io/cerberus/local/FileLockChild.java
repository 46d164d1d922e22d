package io.cerberus.local;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A child JVM for the {@code file:} engine tests: a client that obeys commands on standard input
 * and answers on standard output, so a test can synchronise on what it prints.
 *
 * <p>Arguments: {@code URI NAMESPACE}. Prints {@code READY}, then answers {@code LOCK MODE NAME}
 * (waits) and {@code TRY MODE NAME} with {@code ACQUIRED <fencing token>} or {@code BUSY},
 * {@code UNLOCK MODE NAME} with {@code UNLOCKED}; {@code EXIT} ends it. MODE is
 * {@code exclusive}, {@code read} or {@code write}.
 */
public final class FileLockChild {
    private FileLockChild() {
    }

    /**
     * @param args URI NAMESPACE
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        try (Cerberus cerberus = Cerberus.builder().engine(args[0]).namespace(args[1]).build()) {
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] command = line.trim().split(" ", 3);
                if (command[0].equals("EXIT")) {
                    return;
                }
                DistributedLock lock = switch (command[1]) {
                    case "read" -> cerberus.readWriteLock(command[2]).readLock();
                    case "write" -> cerberus.readWriteLock(command[2]).writeLock();
                    default -> cerberus.lock(command[2]);
                };
                switch (command[0]) {
                    case "LOCK" -> {
                        lock.lock();
                        System.out.println("ACQUIRED " + lock.lease().fencingToken());
                    }
                    case "TRY" -> System.out.println(lock.tryLock() ? "ACQUIRED " + lock.lease().fencingToken() : "BUSY");
                    case "UNLOCK" -> {
                        lock.unlock();
                        System.out.println("UNLOCKED");
                    }
                    default -> System.out.println("UNKNOWN " + line);
                }
                System.out.flush();
            }
        }
    }
}
