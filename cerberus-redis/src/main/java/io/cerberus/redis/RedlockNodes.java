package io.cerberus.redis;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.support.Durations;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The masters of a Redlock engine as one group: sends a request to every node at once, collects
 * the answers within a bound, and tells a node that is down from one that is merely slow.
 *
 * <p>A node is down when it is not connected, fails the request, or has answered nothing for the
 * command timeout; a node that missed the bound of one request but answered something within the
 * command timeout is slow. Late answers still count as signs of life.
 */
final class RedlockNodes implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RedlockNodes.class.getName());

    private final String uri;
    private final List<RedlockNode> nodes;
    private final int quorum;
    private final Duration timeout;
    private final ExecutorService connector;

    /**
     * A node's answer to one request, or why it gave none.
     *
     * @param node the node
     * @param value the answer, if it came in time
     * @param problem why there is no answer, or null
     * @param slow whether the node merely missed the bound (connected, and it answered something
     *     within the command timeout): busy, not down
     * @param <T> the reply type
     */
    record Outcome<T>(RedlockNode node, T value, String problem, boolean slow) {
        boolean answered() {
            return problem == null;
        }
    }

    /**
     * @param uri the redacted engine URI, for messages
     * @param nodes the masters
     * @param timeout the command timeout: a node silent this long is down
     * @param connector runs the nodes' connects; shut down on close
     */
    RedlockNodes(String uri, List<RedlockNode> nodes, Duration timeout, ExecutorService connector) {
        this.uri = uri;
        this.nodes = List.copyOf(nodes);
        this.quorum = nodes.size() / 2 + 1;
        this.timeout = timeout;
        this.connector = connector;
    }

    /** @return how many nodes there are */
    int size() {
        return nodes.size();
    }

    /** @return how many nodes make a majority: {@code N/2 + 1} */
    int quorum() {
        return quorum;
    }

    /** @return the nodes */
    List<RedlockNode> list() {
        return nodes;
    }

    /**
     * Sends one request to every connected node at once and collects the answers, all within
     * {@code bound} of the first send. Never blocks longer; keeps an interrupt for the caller (a
     * reply may be a grant that must be counted).
     *
     * @param bound the longest to wait for all answers
     * @param request sends the request on a node's connection
     * @param <T> the reply type
     * @return one outcome per node, in node order
     */
    <T> List<Outcome<T>> ask(
            Duration bound, Function<RedisAsyncCommands<String, String>, CompletableFuture<T>> request) {
        return ask(bound, request, reply -> false, Integer.MAX_VALUE);
    }

    /**
     * As {@link #ask(Duration, Function)}, but returns as soon as {@code enough} answers pass
     * {@code decisive} (a majority of grants decides an acquire). Nodes that have not answered by
     * then are reported as slow, not down; their requests still run.
     *
     * @param bound the longest to wait for all answers
     * @param request sends the request on a node's connection
     * @param decisive which answers count towards an early decision
     * @param enough how many decisive answers decide
     * @param <T> the reply type
     * @return one outcome per node, in node order
     */
    <T> List<Outcome<T>> ask(
            Duration bound,
            Function<RedisAsyncCommands<String, String>, CompletableFuture<T>> request,
            Predicate<T> decisive,
            int enough) {
        long deadline = System.nanoTime() + bound.toNanos();
        List<CompletableFuture<T>> pending = new ArrayList<>(nodes.size());
        int sent = 0;
        for (RedlockNode node : nodes) {
            RedisAsyncCommands<String, String> commands = node.commandsOrNull();
            CompletableFuture<T> reply = commands == null ? null : request.apply(commands);
            if (reply != null) {
                reply.thenRun(node::answered);
                sent++;
            }
            pending.add(reply);
        }
        CompletableFuture<Void> decided = new CompletableFuture<>();
        AtomicInteger decisiveAnswers = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        int expected = sent;
        for (CompletableFuture<T> reply : pending) {
            if (reply != null) {
                reply.whenComplete((value, failure) -> {
                    boolean counts =
                            failure == null && decisive.test(value) && decisiveAnswers.incrementAndGet() >= enough;
                    if (done.incrementAndGet() == expected || counts) {
                        decided.complete(null);
                    }
                });
            }
        }
        boolean interrupted = false;
        if (expected > 0) {
            while (true) {
                try {
                    decided.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    continue;
                } catch (TimeoutException | ExecutionException e) {
                    // the nodes that did not answer in time are reported below
                }
                break;
            }
        }
        boolean timedOut = System.nanoTime() - deadline >= 0;
        List<Outcome<T>> outcomes = new ArrayList<>(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            RedlockNode node = nodes.get(i);
            CompletableFuture<T> reply = pending.get(i);
            if (reply == null) {
                outcomes.add(new Outcome<>(node, null, node.problem(), false));
            } else if (!reply.isDone()) {
                outcomes.add(
                        timedOut
                                ? new Outcome<>(
                                        node,
                                        null,
                                        "no answer within " + Durations.format(bound),
                                        !node.silentFor(timeout))
                                : new Outcome<>(node, null, "no answer yet when the others had decided", true));
            } else if (reply.isCompletedExceptionally()) {
                Throwable failure = reply.handle((value, error) -> error).join();
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                outcomes.add(new Outcome<>(node, null, String.valueOf(cause.getMessage()), false));
            } else {
                outcomes.add(new Outcome<>(node, reply.join(), null, false));
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return outcomes;
    }

    /**
     * Sends a request to every connected node and does not wait. A node runs the commands of one
     * connection in the order they were sent, so the request runs after every earlier one and
     * before every later one on that node, as long as it is one command (a script sent with
     * {@code EVALSHA} is sent again after a {@code NOSCRIPT} answer, and so may run after a
     * request sent meanwhile).
     *
     * @param request the request
     * @param what what it does, for the debug log of a failure
     */
    void sendToAll(Function<RedisAsyncCommands<String, String>, CompletableFuture<?>> request, String what) {
        for (RedlockNode node : nodes) {
            sendTo(node, request, what);
        }
    }

    private static void sendTo(
            RedlockNode node, Function<RedisAsyncCommands<String, String>, CompletableFuture<?>> request, String what) {
        RedisAsyncCommands<String, String> commands = node.commandsOrNull();
        if (commands != null) {
            request.apply(commands).exceptionally(failure -> {
                LOG.log(Level.DEBUG, () -> "could not " + what + " on redlock node " + node + ": " + failure);
                return null;
            });
        }
    }

    /**
     * Reads the eviction policy of every node at once; a node that is not connected gives an
     * unreadable reading saying why.
     *
     * @param nodes the nodes
     * @param bound the longest each reading may take
     * @return one reading per node, in node order, each completing within {@code bound}
     */
    static List<CompletableFuture<EvictionCheck.Reading>> evictionPolicies(List<RedlockNode> nodes, Duration bound) {
        List<CompletableFuture<EvictionCheck.Reading>> readings = new ArrayList<>(nodes.size());
        for (RedlockNode node : nodes) {
            String server = "node " + node.address();
            RedisAsyncCommands<String, String> commands = node.commandsOrNull();
            readings.add(
                    commands == null
                            ? CompletableFuture.completedFuture(
                                    EvictionCheck.Reading.unreadable(server, node.problem()))
                            : EvictionCheck.read(server, commands, bound));
        }
        return readings;
    }

    /**
     * @param outcomes outcomes of one request
     * @return how many nodes answered in time
     */
    static int answered(List<? extends Outcome<?>> outcomes) {
        return (int) outcomes.stream().filter(Outcome::answered).count();
    }

    /**
     * @param outcomes outcomes of one request
     * @return how many nodes missed the bound but are slow, not down
     */
    static int slow(List<? extends Outcome<?>> outcomes) {
        return (int) outcomes.stream().filter(Outcome::slow).count();
    }

    /**
     * @param what what could not be done ("acquire lock 'x'")
     * @param outcomes the outcomes of the request
     * @return an exception that names the nodes that did not answer, and why
     */
    EngineUnavailableException unavailable(String what, List<? extends Outcome<?>> outcomes) {
        StringJoiner down = new StringJoiner(", ");
        for (Outcome<?> outcome : outcomes) {
            if (!outcome.answered()) {
                down.add(outcome.node().address() + " (" + outcome.problem() + ")");
            }
        }
        return new EngineUnavailableException(
                "redlock engine " + uri + " could not " + what + ": " + answered(outcomes) + " of "
                        + nodes.size() + " nodes answered, a majority needs " + quorum + "; nodes down: " + down
                        + "; check that those servers run and are reachable",
                null);
    }

    @Override
    public void close() {
        try {
            for (RedlockNode node : nodes) {
                node.close();
            }
        } finally {
            connector.shutdownNow();
        }
    }
}
