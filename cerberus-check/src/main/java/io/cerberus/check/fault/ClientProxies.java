package io.cerberus.check.fault;

import io.cerberus.check.console.Durations;
import io.cerberus.check.log.HoldLog;
import io.cerberus.servers.FaultProxy;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The network faults of the safety checker: each client reaches each server through a
 * {@link FaultProxy} of its own ({@link ProxiedUri}), so one client can be cut off from all of
 * them while the others go on. A fault is confirmed twice: each of the client's proxies counted
 * its change of mode (and its return to {@code PASS}), and the
 * target client's own event log shows it felt the fault in the window (an {@code ENGINE} error, a
 * lost lease, a call held by a partition until the heal, or for {@code delay} grants and releases
 * slowed by it). A {@code delay} is also confirmed when the proxies held the client's traffic
 * both ways (a client that only failed its bounded tries in the window logs no timed call), but
 * never when a call inside the window went faster than two delays. The window runs from the
 * moment every proxy is in its fault mode to the moment before the first one passes again, so a
 * call inside it met the fault from its first byte to its last.
 *
 * <ul>
 *   <li>{@code partition}: {@link FaultProxy.Mode#BLACKHOLE} — nothing passes, connections stay open;</li>
 *   <li>{@code drop}: {@link FaultProxy.Mode#DROP} — live connections reset (RST), new ones reset at once;</li>
 *   <li>{@code delay}: {@link FaultProxy.Mode#DELAY} — every chunk passes the delay after it arrived, in each direction.</li>
 * </ul>
 */
public final class ClientProxies implements AutoCloseable {
    /** The faults injected through the proxies. */
    public static final List<String> FAULTS = List.of("partition", "drop", "delay");
    /** How a call inside a delay's window that was not slowed is counted: it disproves the delay. */
    private static final String FASTER = "FASTER than two delays";

    private final Path logs;
    private final Map<String, List<FaultProxy>> proxies =
            new java.util.concurrent.ConcurrentHashMap<>(); // faults may run on several clients at once

    /** @param logs the directory of the clients' event logs ({@code NAME.log}) */
    public ClientProxies(Path logs) {
        this.logs = logs;
    }

    /** @return whether the servers of this engine URI can be put behind proxies: redis://, zk://, etcd://, memcached:// and jdbc: URLs */
    public static boolean proxiable(String engineUri) {
        return ProxiedUri.proxiable(engineUri);
    }

    /**
     * Starts the client's proxies, one per server of the URI.
     *
     * @param client the client's name
     * @param engineUri the servers' engine URI
     * @return the URI through the proxies
     */
    public String clientUri(String client, String engineUri) {
        ProxiedUri proxied = ProxiedUri.start(engineUri);
        proxies.put(client, proxied.proxies());
        return proxied.uri();
    }

    /**
     * Injects a fault on one client's proxy for {@code window}, heals it, and confirms it.
     *
     * @param fault partition, drop or delay
     * @param client the target client
     * @param window how long the fault lasts
     * @param delay the delay per direction of {@code delay}
     * @param faultLog where FAULT events go: the fault, {@code heal}, then {@code confirmed FAULT: EVIDENCE} or
     *        {@code unconfirmed FAULT: WHY}
     * @param confirmWithin how long after the heal the client's evidence may take to appear in its log
     */
    void inject(String fault, String client, Duration window, Duration delay, HoldLog faultLog, Duration confirmWithin)
            throws InterruptedException {
        List<FaultProxy> cut = proxies.get(client);
        long changesBefore = changes(cut);
        long delayedUpBefore = delayedUp(cut);
        long delayedDownBefore = delayedDown(cut);
        faultLog.log("FAULT", client, -1, fault + (fault.equals("delay") ? " " + Durations.format(delay) : ""));
        for (FaultProxy proxy : cut) {
            switch (fault) {
                case "partition" -> proxy.mode(FaultProxy.Mode.BLACKHOLE);
                case "drop" -> proxy.mode(FaultProxy.Mode.DROP);
                case "delay" -> proxy.delay(delay.toMillis());
                default -> throw new IllegalArgumentException("not a proxy fault: " + fault);
            }
        }
        boolean allFaulted = cut.stream().noneMatch(proxy -> proxy.mode() == FaultProxy.Mode.PASS);
        long start = System.nanoTime();
        Thread.sleep(window.toMillis());
        long healed = System.nanoTime();
        cut.forEach(proxy -> proxy.mode(FaultProxy.Mode.PASS));
        long heldUp = delayedUp(cut) - delayedUpBefore;
        long heldDown = delayedDown(cut) - delayedDownBefore;
        faultLog.log("FAULT", client, -1, "heal");
        long changes = changes(cut) - changesBefore;
        if (changes != 2L * cut.size() || !allFaulted) {
            faultLog.log(
                    "FAULT",
                    client,
                    -1,
                    "unconfirmed " + fault + ": its " + cut.size() + " proxies changed mode " + changes + " times, not "
                            + 2 * cut.size());
            return;
        }
        // a call inside the window is logged as it ends, before the heal: with the proxies' count as evidence of a
        // delay, a short look at the log is enough to find a call that disproves it
        boolean delayMet = fault.equals("delay") && heldUp > 0 && heldDown > 0;
        long deadline = healed
                + (delayMet
                        ? Math.min(confirmWithin.toNanos(), TimeUnit.MILLISECONDS.toNanos(500))
                        : confirmWithin.toNanos());
        Map<String, Integer> seen;
        while ((seen = evidence(fault, client, delay, start, healed)).isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        Optional<String> evidence =
                Optional.of(seen).filter(any -> !any.isEmpty()).map(Map::toString);
        if (seen.keySet().stream().anyMatch(what -> what.contains(FASTER))) {
            evidence = Optional.empty();
        } else if (evidence.isEmpty() && delayMet) {
            evidence = Optional.of(
                    "{its traffic held by the proxies: " + heldUp + " chunks to the server, " + heldDown + " back}");
        }
        faultLog.log(
                "FAULT",
                client,
                -1,
                evidence.map(shown -> "confirmed " + fault + ": " + shown)
                        .orElse("unconfirmed " + fault + ": " + client
                                + (fault.equals("delay")
                                        ? " logged no engine error and no call slowed by it"
                                                + " (or a call inside the window faster than two delays)"
                                        : " logged no engine error, lost lease or call held by it")));
    }

    /**
     * @return what the client logged that shows the fault, counted: engine errors and lost leases from the start of
     *         the fault on; for {@code partition} and {@code drop}, also a timed call begun in the window that ended only
     *         after the heal (held by the blackhole, or retried by its client library until the heal); for {@code delay}, also its timed calls (grants, releases) — every call that began and
     *         ended inside the window must have taken two delays (one each way), and at least one must have, or one
     *         that overlapped the window must have taken more than one delay
     */
    private Map<String, Integer> evidence(String fault, String client, Duration delay, long start, long healed) {
        List<HoldLog.Event> events;
        try {
            events = HoldLog.read(logs.resolve(client + ".log"));
        } catch (IOException e) {
            return Map.of();
        }
        Map<String, Integer> seen = new TreeMap<>();
        long twoDelays = delay.multipliedBy(2).toMillis() - 2; // logged in whole milliseconds, rounded down
        for (HoldLog.Event event : events) {
            if (event.nanos() < start) {
                continue;
            }
            OptionalLong took = callMillis(event);
            if (event.kind().equals("LOST")) {
                seen.merge("lease lost", 1, Integer::sum);
            } else if (event.kind().equals("ENGINE") && took.isEmpty()) {
                seen.merge(event.detail(), 1, Integer::sum);
            } else if ((fault.equals("partition") || fault.equals("drop")) && took.isPresent()) {
                long began = event.nanos() - TimeUnit.MILLISECONDS.toNanos(took.getAsLong());
                if (began >= start && began < healed && event.nanos() >= healed) {
                    seen.merge(event.detail().split(" ", 2)[0] + " held until the heal", 1, Integer::sum);
                }
            } else if (fault.equals("delay") && took.isPresent()) {
                long began = event.nanos() - TimeUnit.MILLISECONDS.toNanos(took.getAsLong());
                String call = event.detail().split(" ", 2)[0];
                if (began >= start && event.nanos() <= healed) {
                    seen.merge(
                            call
                                    + (took.getAsLong() >= twoDelays
                                            ? " inside, two delays or more"
                                            : " inside, " + FASTER),
                            1,
                            Integer::sum);
                } else if (began < healed && took.getAsLong() >= delay.toMillis()) {
                    seen.merge(call + " across the window, one delay or more", 1, Integer::sum);
                }
            }
        }
        return seen;
    }

    private static long changes(List<FaultProxy> proxies) {
        return proxies.stream().mapToLong(FaultProxy::changes).sum();
    }

    private static long delayedUp(List<FaultProxy> proxies) {
        return proxies.stream().mapToLong(FaultProxy::delayedUp).sum();
    }

    private static long delayedDown(List<FaultProxy> proxies) {
        return proxies.stream().mapToLong(FaultProxy::delayedDown).sum();
    }

    /** @return how long a timed call took, for {@code ENGINE acquire 12ms} and {@code ENGINE release 12ms} */
    private static OptionalLong callMillis(HoldLog.Event event) {
        String[] words = event.detail().split(" ");
        if (!event.kind().equals("ENGINE") || words.length != 2 || !words[1].endsWith("ms")) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(words[1].substring(0, words[1].length() - 2)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    @Override
    public void close() {
        proxies.values().forEach(each -> each.forEach(FaultProxy::close));
    }
}
