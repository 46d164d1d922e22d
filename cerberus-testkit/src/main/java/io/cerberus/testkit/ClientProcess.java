package io.cerberus.testkit;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Leadership;
import io.cerberus.LockLostException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A lock client in a child JVM that obeys commands on standard input and answers on standard
 * output, so a test can hold locks in another process, then kill it, pause it or cut it off.
 *
 * <p>Arguments: {@code URI NAMESPACE [LEASE_MS]} (the client's default lease, renewed by the
 * watchdog). Prints {@code READY}, then answers one line per command, where MODE is
 * {@code exclusive}, {@code read} or {@code write}:
 * <ul>
 * <li>{@code LOCK MODE NAME} (waits) → {@code ACQUIRED <fencing token>} (-1 on an engine without fencing tokens)
 * <li>{@code TRY MODE NAME} → {@code ACQUIRED <fencing token>} or {@code BUSY}
 * <li>{@code VALID MODE NAME} → {@code VALID true|false}
 * <li>{@code SILENT MODE NAME} → {@code SILENT <ms>} or {@code SILENT none}: the hold's
 *     {@link io.cerberus.Lease#silentHolderExpiry()}
 * <li>{@code UNLOCK MODE NAME} → {@code UNLOCKED} or {@code LOST <message>}
 * <li>{@code ONCE SLEEP_MS CONTENT} → {@code EXECUTED|REPLAYED <pid of the process that ran it>}:
 *     an idempotency-guarded operation that sleeps (duplicates wait for it)
 * <li>{@code MANY COUNT PREFIX} → {@code EXECUTED <n> REPLAYED <m>}: COUNT guarded no-ops, as fast as it can
 * <li>{@code LEAD - NAME} → {@code LEADING <term>} once elected in the election NAME (waits up to 20 s),
 *     or {@code LEADING false}; {@code LEADING - NAME} → {@code LEADING true|false}: whether it leads now
 * <li>{@code PERMITS COUNT/PERMITS NAME} (waits up to 20 s) → {@code ACQUIRED <id>}: COUNT permits of the
 *     semaphore NAME of PERMITS permits, held until the process ends
 * <li>{@code EXIT} → ends the process
 * </ul>
 * Use {@link #start} and {@link #lock} from tests.
 */
public final class ClientProcess {
    private ClientProcess() {}

    /**
     * Starts a client process and waits until it is ready.
     *
     * @param uri the engine URI
     * @param namespace the namespace
     * @param lease the client's default lease
     * @return the running client; close it
     */
    public static ManagedProcess start(String uri, String namespace, Duration lease) {
        ManagedProcess child = ManagedProcess.startJavaWithEngine(
                ClientProcess.class, uri, namespace, Long.toString(lease.toMillis()));
        try {
            child.awaitLine("READY", TestTimes.millis(20_000));
        } catch (ServerException e) {
            child.close();
            throw e;
        }
        return child;
    }

    /**
     * Makes the client take a lock, waiting for it.
     *
     * @param child a client started with {@link #start}
     * @param mode {@code exclusive}, {@code read} or {@code write}
     * @param name the lock name (no spaces at its ends)
     * @return the fencing token of the hold, or -1 on an engine without fencing tokens
     */
    public static long lock(ManagedProcess child, String mode, String name) {
        String answer = child.ask("LOCK " + mode + " " + name, TestTimes.millis(20_000));
        if (!answer.startsWith("ACQUIRED ")) {
            throw new AssertionError("the client answered '" + answer + "' to LOCK" + child.diagnostics());
        }
        return Long.parseLong(answer.substring("ACQUIRED ".length()));
    }

    /**
     * Makes a client take part in an election and waits until it leads.
     *
     * @param child a client started with {@link #start}
     * @param name the election
     * @return its term (-1 on an engine without fencing tokens)
     */
    public static long lead(ManagedProcess child, String name) {
        String answer = child.ask("LEAD - " + name, TestTimes.millis(30_000));
        if (!answer.startsWith("LEADING ") || answer.equals("LEADING false")) {
            throw new AssertionError("the client answered '" + answer + "' to LEAD" + child.diagnostics());
        }
        return Long.parseLong(answer.substring("LEADING ".length()));
    }

    /**
     * Asks a client how long the engine keeps one of its holds once it falls silent.
     *
     * @param child a client started with {@link #start}, holding the lock
     * @param mode the mode it holds the lock in
     * @param name the lock name
     * @return the hold's {@link io.cerberus.Lease#silentHolderExpiry()}
     */
    public static java.util.Optional<Duration> silentHolderExpiry(ManagedProcess child, String mode, String name) {
        String answer = child.ask("SILENT " + mode + " " + name, TestTimes.millis(10_000));
        if (!answer.startsWith("SILENT ")) {
            throw new AssertionError("the client answered '" + answer + "' to SILENT" + child.diagnostics());
        }
        String value = answer.substring("SILENT ".length());
        return value.equals("none")
                ? java.util.Optional.empty()
                : java.util.Optional.of(Duration.ofMillis(Long.parseLong(value)));
    }

    /**
     * @param args NAMESPACE [LEASE_MS]; the engine URI comes in {@link ManagedProcess#ENGINE_ENV}
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        Duration lease = args.length > 1 ? Duration.ofMillis(Long.parseLong(args[1])) : Duration.ofSeconds(30);
        try (Cerberus cerberus = Cerberus.builder()
                .engine(ManagedProcess.engineUri())
                .namespace(args[0])
                .defaultLease(lease)
                .build()) {
            Map<String, Leadership> leaderships = new HashMap<>();
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] command = line.trim().split(" ", 3);
                if (command[0].equals("EXIT")) {
                    return;
                }
                if (command.length < 3) {
                    System.out.println("UNKNOWN " + line);
                    System.out.flush();
                    continue;
                }
                if (command[0].equals("MANY")) {
                    System.out.println(many(cerberus, Integer.parseInt(command[1]), command[2]));
                    System.out.flush();
                    continue;
                }
                if (command[0].equals("LEAD") || command[0].equals("LEADING")) {
                    System.out.println(leadership(cerberus, leaderships, command[0], command[2]));
                    System.out.flush();
                    continue;
                }
                if (command[0].equals("PERMITS")) {
                    System.out.println(permits(cerberus, command[1], command[2]));
                    System.out.flush();
                    continue;
                }
                if (command[0].equals("ONCE")) {
                    System.out.println(once(cerberus, Long.parseLong(command[1]), command[2]));
                    System.out.flush();
                    continue;
                }
                DistributedLock lock = switch (command[1]) {
                    case "read" -> cerberus.readWriteLock(command[2]).readLock();
                    case "write" -> cerberus.readWriteLock(command[2]).writeLock();
                    default -> cerberus.lock(command[2]);
                };
                System.out.println(answer(command[0], lock));
                System.out.flush();
            }
        }
    }

    /**
     * {@code PERMITS COUNT/PERMITS NAME}: takes COUNT permits of the semaphore, kept until the process ends.
     *
     * @return {@code ACQUIRED <count>}, or {@code ERROR <exception>}
     */
    private static String permits(Cerberus cerberus, String counts, String name) {
        String[] parts = counts.split("/", 2);
        try {
            io.cerberus.Permits held = cerberus.semaphore(name, Integer.parseInt(parts[1]))
                    .acquire(Integer.parseInt(parts[0]), Duration.ofSeconds(20));
            return "ACQUIRED " + held.count();
        } catch (Exception e) {
            return "ERROR " + e;
        }
    }

    /**
     * Makes a client take permits of a semaphore, waiting up to 20 s.
     *
     * @param child a client started with {@link #start}
     * @param name the semaphore
     * @param count how many permits
     * @param permits the semaphore's permits
     */
    public static void permits(ManagedProcess child, String name, int count, int permits) {
        String answer = child.ask("PERMITS " + count + "/" + permits + " " + name, TestTimes.millis(30_000));
        if (!answer.equals("ACQUIRED " + count)) {
            throw new AssertionError("the client answered '" + answer + "' to PERMITS" + child.diagnostics());
        }
    }

    /**
     * {@code LEAD - NAME}: takes part in the election NAME and waits (up to 20 s) to lead;
     * {@code LEADING - NAME}: whether it leads now.
     *
     * @return {@code LEADING <term>} (-1 on an engine without fencing tokens), {@code LEADING false}, or
     *     {@code ERROR <exception>}
     */
    private static String leadership(
            Cerberus cerberus, Map<String, Leadership> leaderships, String command, String name) {
        try {
            if (command.equals("LEADING")) {
                Leadership leadership = leaderships.get(name);
                return "LEADING " + (leadership != null && leadership.isLeader());
            }
            Leadership leadership = leaderships.computeIfAbsent(
                    name,
                    election -> cerberus.leadership(
                                    election, "pid-" + ProcessHandle.current().pid())
                            .start());
            if (!leadership.awaitLeadership(Duration.ofSeconds(20))) {
                return "LEADING false";
            }
            return "LEADING " + (cerberus.capabilities().contains(Capability.FENCING) ? leadership.term() : -1);
        } catch (Exception e) {
            return "ERROR " + e;
        }
    }

    /**
     * {@code ONCE SLEEP_MS CONTENT}: runs an operation that sleeps and returns this process's id,
     * guarded by the key of CONTENT (duplicates wait up to 20 s).
     *
     * @return {@code EXECUTED|REPLAYED|UNGUARDED <pid>}, or {@code ERROR <exception>}
     */
    private static String once(Cerberus cerberus, long sleepMillis, String content) {
        IdempotencyGuard guard = waitingGuard(cerberus);
        try {
            Outcome<String> outcome =
                    guard.execute(IdempotencyKey.ofContent("once", content), Duration.ofHours(1), () -> {
                        Thread.sleep(sleepMillis);
                        return "pid-" + ProcessHandle.current().pid();
                    });
            return outcome.status() + " " + outcome.value();
        } catch (Exception e) {
            return "ERROR " + e;
        }
    }

    /**
     * {@code MANY COUNT PREFIX}: runs COUNT guarded no-op operations, keys PREFIX-0 to PREFIX-(COUNT-1),
     * as fast as it can (duplicates wait up to 20 s).
     *
     * @return {@code EXECUTED <n> REPLAYED <m>}, or {@code ERROR <exception>}
     */
    private static String many(Cerberus cerberus, int count, String prefix) {
        IdempotencyGuard guard = waitingGuard(cerberus);
        int executed = 0;
        int replayed = 0;
        try {
            for (int i = 0; i < count; i++) {
                Outcome<String> outcome = guard.execute(
                        IdempotencyKey.ofContent("many", prefix + "-" + i), Duration.ofHours(1), () -> "ok");
                if (outcome.status() == Outcome.Status.REPLAYED) {
                    replayed++;
                } else {
                    executed++;
                }
            }
            return "EXECUTED " + executed + " REPLAYED " + replayed;
        } catch (Exception e) {
            return "ERROR " + e;
        }
    }

    /** @return a guard whose duplicates wait up to 20 s for the first attempt */
    private static IdempotencyGuard waitingGuard(Cerberus cerberus) {
        return cerberus.idempotency(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(20)));
    }

    /** @return the hold's fencing token, or -1 on an engine without them (Redlock) */
    private static long fence(DistributedLock lock) {
        try {
            return lock.lease().fencingToken();
        } catch (UnsupportedCapabilityException e) {
            return -1;
        }
    }

    private static String answer(String command, DistributedLock lock) {
        switch (command) {
            case "LOCK":
                lock.lock();
                return "ACQUIRED " + fence(lock);
            case "TRY":
                return lock.tryLock() ? "ACQUIRED " + fence(lock) : "BUSY";
            case "VALID":
                return "VALID " + lock.lease().isValid();
            case "SILENT":
                return "SILENT "
                        + lock.lease()
                                .silentHolderExpiry()
                                .map(expiry -> Long.toString(expiry.toMillis()))
                                .orElse("none");
            case "UNLOCK":
                try {
                    lock.unlock();
                    return "UNLOCKED";
                } catch (LockLostException e) {
                    return "LOST " + e.getMessage();
                }
            default:
                return "UNKNOWN " + command;
        }
    }
}
