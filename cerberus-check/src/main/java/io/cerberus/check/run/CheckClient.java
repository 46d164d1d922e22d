package io.cerberus.check.run;

import io.cerberus.check.log.HoldLog;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** One {@code check-worker} JVM as the checker sees it: its process and what it last announced. */
public final class CheckClient {
    private final String name;
    private volatile ManagedProcess process;
    private volatile String state = "STARTING";
    private volatile long stateNanos = System.nanoTime();
    private volatile boolean paused;
    private volatile boolean ready;

    /** How long the kernel gets to confirm a pause, a resume or a kill of a client. */
    public static final Duration CONFIRM = Duration.ofSeconds(10);

    private CheckClient(String name) {
        this.name = name;
    }

    /**
     * Starts a client of the lock check ({@code check-worker}); the URIs go in its environment, so that their secrets
     * stay off command lines.
     *
     * @param registerStore where its registers are, or null for files
     * @param secondEngine the engine it switches to and back, or null
     */
    public static CheckClient start(
            String name, List<String> workerArgs, String engineUri, String registerStore, String secondEngine) {
        Map<String, String> environment = new HashMap<>(Map.of(Workers.ENGINE_ENV, engineUri));
        if (registerStore != null) {
            environment.put(Workers.REGISTER_ENV, registerStore);
        }
        if (secondEngine != null) {
            environment.put(Workers.SECOND_ENGINE_ENV, secondEngine);
        }
        return start(name, "check-worker", workerArgs, environment);
    }

    /** Starts a client running the hidden worker command {@code worker} ({@code check-worker}, {@code check-idempotency-worker}). */
    public static CheckClient start(String name, String worker, List<String> workerArgs, String engineUri) {
        return start(name, worker, workerArgs, Map.of(Workers.ENGINE_ENV, engineUri));
    }

    private static CheckClient start(
            String name, String worker, List<String> workerArgs, Map<String, String> environment) {
        List<String> args = new ArrayList<>(List.of("--client", name));
        args.addAll(workerArgs);
        CheckClient client = new CheckClient(name);
        client.process = Workers.start(worker, args, environment, "check client " + name, client::announced);
        return client;
    }

    /** Called with each line the worker prints, on the reading thread; EXITED once it has ended. */
    private void announced(String line) {
        state = line.split(" ", 2)[0];
        stateNanos = System.nanoTime();
        ready |= state.equals("READY");
    }

    public String name() {
        return name;
    }

    /** @return the last announcement: READY, HOLD, READ, FREE, or STARTING; EXITED once the process has ended */
    public String state() {
        return process.isAlive() ? state : "EXITED";
    }

    /** @return {@link System#nanoTime()} when the last announcement was read */
    public long stateNanos() {
        return stateNanos;
    }

    /** @return whether the client announced READY (it may have moved on since) */
    boolean ready() {
        return ready;
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** @return whether a fault can be aimed at it: alive and not under a pause */
    public boolean aimable() {
        return process.isAlive() && !paused;
    }

    /** @return its exit code, once it has ended */
    public int exitCode() {
        return process.awaitExit(Duration.ZERO);
    }

    boolean paused() {
        return paused;
    }

    /** Sends the client a line on its standard input. */
    public void send(String line) {
        process.send(line);
    }

    /** Sends SIGSTOP and waits until the kernel shows the process stopped. */
    public void pause(Duration confirmWithin) {
        process.pause(confirmWithin);
        paused = true;
    }

    /** Sends SIGCONT and waits until the process runs again. */
    public void resume(Duration confirmWithin) {
        process.resume(confirmWithin);
        paused = false;
    }

    /** Kills with SIGKILL and waits for the process to end. */
    public void kill(Duration confirmWithin) {
        process.kill(confirmWithin);
        paused = false;
    }

    /** Closes the client's input (it stops after its current round) and waits; kills it if it does not stop. */
    void stop(Duration within) {
        if (paused) {
            resume(within);
        }
        process.closeInput();
        try {
            process.awaitExit(within);
        } catch (ServerException notYet) {
            kill(within);
        }
    }

    /** Waits until every client announced READY, up to 60 s; fails at once when one ended first. */
    public static void awaitReady(List<CheckClient> clients) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        for (CheckClient client : clients) {
            while (!client.ready()) {
                if (!client.alive() || System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(
                            "check client " + client.name() + " did not start (see its errors above)");
                }
                Thread.sleep(10);
            }
        }
    }

    /**
     * In a worker: the checker stops a client by closing its standard input.
     *
     * @return a flag that turns true when this process's standard input ends (watched by a daemon thread)
     */
    static java.util.concurrent.atomic.AtomicBoolean stoppedWhenInputEnds() {
        return stoppedWhenInputEnds(line -> {});
    }

    /**
     * In a worker: the checker stops a client by closing its standard input, and may send it lines before that.
     *
     * @param onLine receives each line of the input, on the thread that reads it
     * @return a flag that turns true when this process's standard input ends (watched by a daemon thread)
     */
    static java.util.concurrent.atomic.AtomicBoolean stoppedWhenInputEnds(java.util.function.Consumer<String> onLine) {
        java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
        Thread stdin = new Thread(
                () -> {
                    try (java.io.BufferedReader in = new java.io.BufferedReader(
                            new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8))) {
                        for (String line = in.readLine(); line != null; line = in.readLine()) {
                            try {
                                onLine.accept(line); // the checker closes our input to stop us
                            } catch (RuntimeException e) {
                                System.err.println("cerberus check worker: could not act on '" + line + "': " + e);
                            }
                        }
                    } catch (java.io.IOException e) {
                        // treated as closed
                    }
                    stopped.set(true);
                },
                "check-worker-input");
        stdin.setDaemon(true);
        stdin.start();
        return stopped;
    }

    /**
     * In a worker: connects, trying again every 200 ms while the engine cannot be reached (a client started during a
     * failover or a server's restart finds none for a while), until its input ends. Each failure is logged
     * {@code connect failed} in its event log; the first is printed on standard error too.
     *
     * @param connect builds the engine's client
     * @param client the worker's name
     * @return the client
     * @throws io.cerberus.EngineUnavailableException the last failure, when the input ended before the engine answered
     */
    static <T> T connectWhenUp(
            java.util.function.Supplier<T> connect,
            java.util.concurrent.atomic.AtomicBoolean stopped,
            HoldLog log,
            String client)
            throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return connect.get();
            } catch (io.cerberus.EngineUnavailableException e) {
                log.log("ENGINE", client, -1, "connect failed");
                if (stopped.get()) {
                    throw e;
                }
                if (attempt == 1) {
                    System.err.println(
                            "check client " + client + ": " + e.getMessage() + "; trying again until it answers");
                }
                Thread.sleep(200);
            }
        }
    }

    /** Kills the clients still alive with SIGKILL, paused ones too: what is left to do when a signal ends the checker. */
    public static void killAll(List<CheckClient> clients) {
        for (CheckClient client : clients) {
            if (client.alive()) {
                client.kill(CheckClient.CONFIRM);
            }
        }
    }

    /** Stops every client (each within {@code within}), then closes the proxies, if any. */
    public static void stopAll(List<CheckClient> clients, AutoCloseable proxies, Duration within) throws Exception {
        for (CheckClient client : clients) {
            client.stop(within);
        }
        if (proxies != null) {
            proxies.close();
        }
    }
}
