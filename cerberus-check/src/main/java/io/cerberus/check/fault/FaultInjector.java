package io.cerberus.check.fault;

import io.cerberus.check.console.Durations;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.run.CheckClient;
import io.cerberus.check.servers.LockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Injects the faults of a {@code cerberus check} run (the lock check's and the idempotency
 * check's): every {@code every}, the next fault of the list, aimed at a client the caller picks
 * (the holder, the client inside an operation), each confirmed before it counts. With
 * {@code parallel} K above 1, up to K faults are in flight at once, each on another client, and
 * server faults one at a time; a new fault starts {@code every} after the last one started. With 1,
 * the next starts {@code every} after the last one ended.
 *
 * <p>Client faults: {@code pause} (SIGSTOP for {@code pause}, then SIGCONT, each confirmed by the
 * kernel's process state; logged {@code pause D}, {@code confirmed pause}, {@code resume}), {@code kill} (SIGKILL; logged
 * {@code kill}, then {@code confirmed kill} once the process has exited; a new client takes its
 * place), {@code partition}, {@code drop}, {@code delay} (through the client's proxies, for
 * {@code window}). Server faults go to the {@link LockServer}; a caller's own faults to its
 * {@link OwnFault}.
 */
public final class FaultInjector {
    /**
     * The faults {@code --faults} takes (besides {@code none}). The other first words of a fault log's lines are the
     * steps of these faults ({@code resume}, {@code heal}, {@code server-restart}, ...) and their confirmations.
     */
    public static final List<String> KINDS;

    /** The faults aimed at one client: the process faults and the proxy faults. */
    public static final List<String> CLIENT_FAULTS;

    static {
        List<String> client = new ArrayList<>(List.of("pause", "kill"));
        client.addAll(ClientProxies.FAULTS);
        CLIENT_FAULTS = List.copyOf(client);
        List<String> kinds = new ArrayList<>(CLIENT_FAULTS);
        kinds.addAll(LockServer.FAULTS);
        kinds.add("between-steps");
        kinds.add("switch");
        KINDS = List.copyOf(kinds);
    }

    /**
     * The first word of the fault log's line for a client that ended although no fault was aimed at it (its errors are
     * on the console): a new client takes its place, and a judge ends its holds at its last line, as a killed one's.
     */
    public static final String EXITED = "exited";

    /** Picks the client a fault is aimed at, passing over the clients under a fault now. */
    @FunctionalInterface
    public interface Aim {
        CheckClient target(List<CheckClient> running, Set<String> busy) throws InterruptedException;
    }

    /** A fault of the caller's own ({@code between-steps}). */
    @FunctionalInterface
    public interface OwnFault {
        /** @return false if it is not one of the caller's faults */
        boolean inject(String fault, CheckClient target, List<CheckClient> running, HoldLog faultLog) throws Exception;
    }

    /**
     * @param faults the faults, injected in turn ({@code none}: no fault)
     * @param every the time between two faults
     * @param serverEvery the least time from a server fault's start to the next one's (a turn that comes sooner is passed
     *     over); zero: a server fault waits only for the last one to end
     * @param parallel how many may be in flight at once
     * @param pause how long a paused client stays stopped
     * @param window how long a proxy fault lasts
     * @param delay the delay per direction of {@code delay}
     * @param serverDown how long a killed server stays down
     * @param confirmWithin how long after a proxy fault's heal its evidence may take to show in the client's log
     */
    public record Plan(
            List<String> faults,
            Duration every,
            Duration serverEvery,
            int parallel,
            Duration pause,
            Duration window,
            Duration delay,
            Duration serverDown,
            Duration confirmWithin) {}

    private final Plan plan;
    private final ClientProxies proxies;
    private final LockServer server;
    private final Supplier<CheckClient> newClient;
    private final Aim aim;
    private final OwnFault own;

    /**
     * @param proxies the clients' proxies, or null when no proxy fault is planned
     * @param server the server the checker runs, or null
     * @param newClient starts the client that takes a killed one's place
     */
    public FaultInjector(
            Plan plan,
            ClientProxies proxies,
            LockServer server,
            Supplier<CheckClient> newClient,
            Aim aim,
            OwnFault own) {
        this.plan = plan;
        this.proxies = proxies;
        this.server = server;
        this.newClient = newClient;
        this.aim = aim;
        this.own = own;
    }

    /**
     * @param counts how many times each fault and step was logged
     * @return for a report: the faults' total and counts, then the steps' ({@code 12: {kill=6, pause=6}; steps {resume=6}}),
     *     or {@code none}
     */
    public static String injectedText(Map<String, Integer> counts) {
        Map<String, Integer> faults = new TreeMap<>(counts);
        faults.keySet().retainAll(KINDS);
        Map<String, Integer> steps = new TreeMap<>(counts);
        steps.keySet().removeAll(KINDS);
        Integer exited = steps.remove(EXITED);
        String text = faults.isEmpty() && steps.isEmpty()
                ? "none"
                : total(faults) + ": " + faults + (steps.isEmpty() ? "" : "; steps " + steps);
        return exited == null ? text : text + "; clients that ended unasked (replaced): " + exited;
    }

    /**
     * @param confirmed how many of each fault were confirmed
     * @param notConfirmed how many of each could not be
     * @return for a report: {@code 11: {kill=6, pause=5}, NOT confirmed: 1 {drop=1}}
     */
    public static String confirmedText(Map<String, Integer> confirmed, Map<String, Integer> notConfirmed) {
        return total(confirmed)
                + (confirmed.isEmpty() ? "" : ": " + confirmed)
                + (notConfirmed.isEmpty() ? "" : ", NOT confirmed: " + total(notConfirmed) + " " + notConfirmed);
    }

    private static int total(Map<String, Integer> counts) {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }

    /**
     * Injects faults until {@code endNanos}, then waits for those in flight.
     *
     * @param running the clients, changed as killed ones are replaced (thread-safe: faults may run in parallel)
     * @throws Exception a fault that could not be confirmed, which stops the run
     */
    public void run(List<CheckClient> running, HoldLog faultLog, long endNanos) throws Exception {
        ExecutorService pool = plan.parallel() == 1
                ? null
                : Executors.newFixedThreadPool(plan.parallel(), task -> {
                    Thread thread = new Thread(task, "check-fault");
                    thread.setDaemon(true);
                    return thread;
                });
        Set<String> busy = ConcurrentHashMap.newKeySet(); // clients under a fault now
        AtomicBoolean serverBusy = new AtomicBoolean();
        List<Future<?>> inFlight = new ArrayList<>();
        try {
            int next = 0;
            long nextFault = System.nanoTime() + plan.every().toNanos();
            Long lastServerFault = null;
            while (System.nanoTime() - endNanos < 0) {
                replaceExited(running, busy, faultLog);
                long now = System.nanoTime();
                for (Future<?> done : inFlight.stream().filter(Future::isDone).toList()) {
                    done.get();
                    inFlight.remove(done);
                }
                String fault = plan.faults().get(next % plan.faults().size());
                boolean serverFault = LockServer.FAULTS.contains(fault);
                if (serverFault
                        && lastServerFault != null
                        && now - lastServerFault < plan.serverEvery().toNanos()) {
                    next++; // too soon after the last one: passed over, the client faults go on
                    Thread.sleep(1); // a list of server faults only comes back here at once
                    continue;
                }
                if (now - nextFault < 0
                        || plan.faults().equals(List.of("none"))
                        || inFlight.size() >= plan.parallel()
                        || serverFault && serverBusy.get()) {
                    Thread.sleep(Math.max(
                            1,
                            Math.min(
                                    TimeUnit.NANOSECONDS.toMillis(nextFault - now),
                                    Math.min(20, TimeUnit.NANOSECONDS.toMillis(endNanos - now)))));
                    continue;
                }
                next++;
                CheckClient target = aim.target(running, busy); // server faults too: timed by the clients' state
                if (serverFault) {
                    lastServerFault = System.nanoTime();
                }
                if (pool == null) {
                    inject(fault, target, running, faultLog);
                } else {
                    if (serverFault) {
                        serverBusy.set(true);
                    } else {
                        busy.add(target.name());
                    }
                    inFlight.add(pool.submit(() -> {
                        try {
                            inject(fault, target, running, faultLog);
                        } finally {
                            if (serverFault) {
                                serverBusy.set(false);
                            } else {
                                busy.remove(target.name());
                            }
                        }
                        return null;
                    }));
                }
                nextFault = System.nanoTime() + plan.every().toNanos();
            }
            for (Future<?> last : inFlight) {
                last.get();
            }
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
    }

    /**
     * @return the first client a fault can be aimed at (alive, not paused, not under another fault): an aim's fallback
     * @throws IllegalStateException if there is none
     */
    public static CheckClient anyFree(List<CheckClient> running, Set<String> busy) {
        return running.stream()
                .filter(client -> client.aimable() && !busy.contains(client.name()))
                .findFirst()
                .orElseThrow(() ->
                        new IllegalStateException("no client to aim a fault at: each is under a fault or has ended"));
    }

    /**
     * Replaces each client that ended although no fault is aimed at it (a worker that failed), so that no fault is
     * aimed at a process that is gone, and the run keeps its number of clients.
     */
    private void replaceExited(List<CheckClient> running, Set<String> busy, HoldLog faultLog) {
        for (CheckClient client : running) {
            if (!client.alive() && !busy.contains(client.name())) {
                faultLog.log(
                        "FAULT",
                        client.name(),
                        -1,
                        EXITED + " unasked (exit code " + client.exitCode() + "): a new client takes its place");
                running.remove(client);
                running.add(newClient.get());
            }
        }
    }

    /** Injects one fault, and waits until it is over (a paused client resumed, a killed one replaced, a server back). */
    private void inject(String fault, CheckClient target, List<CheckClient> running, HoldLog faultLog)
            throws Exception {
        switch (fault) {
            case "pause" -> {
                faultLog.log("FAULT", target.name(), -1, "pause " + Durations.format(plan.pause()));
                target.pause(CheckClient.CONFIRM);
                faultLog.log("FAULT", target.name(), -1, "confirmed pause: the kernel shows the process stopped");
                Thread.sleep(plan.pause().toMillis());
                target.resume(CheckClient.CONFIRM);
                faultLog.log("FAULT", target.name(), -1, "resume");
            }
            case "kill" -> {
                faultLog.log("FAULT", target.name(), -1, "kill");
                target.kill(CheckClient.CONFIRM);
                // lines it wrote between the signal and its death come after "kill": a judge ends its holds here too
                faultLog.log("FAULT", target.name(), -1, "confirmed kill: the process exited");
                running.remove(target);
                running.add(newClient.get());
            }
            case "partition", "drop", "delay" ->
                proxies.inject(fault, target.name(), plan.window(), plan.delay(), faultLog, plan.confirmWithin());
            case "server-kill", "majority-kill", "leader-kill", "failover", "failover-unreplicated" ->
                server.inject(fault, plan.serverDown(), detail -> faultLog.log("FAULT", "server", -1, detail));
            case "none" -> {
                // no fault
            }
            default -> {
                if (!own.inject(fault, target, running, faultLog)) {
                    throw new IllegalArgumentException("no such fault: " + fault);
                }
            }
        }
    }
}
