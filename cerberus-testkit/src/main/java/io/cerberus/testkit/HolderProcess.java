package io.cerberus.testkit;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.LockLostException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A child JVM that takes one lock and obeys commands on standard input, for tests that kill,
 * pause or cut off a holder in another process.
 *
 * <p>Arguments: {@code URI NAMESPACE NAME LEASE_MS MODE} where MODE is {@code exclusive},
 * {@code read} or {@code write}. Prints {@code ACQUIRED <fencing token>} once it holds the lock
 * (renewed by the watchdog), then answers: {@code VALID} → {@code VALID true|false};
 * {@code UNLOCK} → {@code UNLOCKED} or {@code LOST <message>}; {@code EXIT} → exits.
 */
public final class HolderProcess {
    private HolderProcess() {
    }

    /**
     * @param args URI NAMESPACE NAME LEASE_MS MODE
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 5) {
            System.err.println("usage: HolderProcess URI NAMESPACE NAME LEASE_MS exclusive|read|write");
            System.exit(64);
        }
        try (Cerberus cerberus = Cerberus.builder().engine(args[0]).namespace(args[1])
                .defaultLease(Duration.ofMillis(Long.parseLong(args[3]))).build()) {
            DistributedLock lock = switch (args[4]) {
                case "read" -> cerberus.readWriteLock(args[2]).readLock();
                case "write" -> cerberus.readWriteLock(args[2]).writeLock();
                default -> cerberus.lock(args[2]);
            };
            lock.lock();
            System.out.println("ACQUIRED " + lock.lease().fencingToken());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String command;
            while ((command = in.readLine()) != null) {
                switch (command.trim()) {
                    case "VALID" -> System.out.println("VALID " + lock.lease().isValid());
                    case "UNLOCK" -> {
                        try {
                            lock.unlock();
                            System.out.println("UNLOCKED");
                        } catch (LockLostException e) {
                            System.out.println("LOST " + e.getMessage());
                        }
                    }
                    case "EXIT" -> {
                        return;
                    }
                    default -> System.out.println("UNKNOWN " + command);
                }
                System.out.flush();
            }
        }
    }
}
