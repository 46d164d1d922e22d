package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One real server process on a loopback port, started by this JVM (never the system service):
 * the lifecycle every server kind of this module shares. A kind gives its command and says when
 * the process serves ({@link #serves()}); this class starts it, waits until it serves (failing at
 * once, with its output, if it ends first), and injects the process faults: {@link #kill()},
 * {@link #pause()}, {@link #resume()}, {@link #restart()} (same port, same command). Invariant: at
 * most one process of the server runs at a time, on {@link #port()}. Not thread-safe: one test or
 * one fault loop drives it.
 */
public abstract class LoopbackServer implements Deployment {
    private final String kind;
    private final int port;
    private final List<String> command;
    private final Path output;
    private final Duration startTimeout;
    private ManagedProcess process;
    private boolean paused;

    /**
     * @param kind the server's program name, for messages ("redis-server")
     * @param port the port it serves on
     * @param command the command that starts it
     * @param options the builder's common options: output file and start timeout
     */
    protected LoopbackServer(String kind, int port, List<String> command, Options<?> options) {
        this.kind = kind;
        this.port = port;
        this.command = List.copyOf(command);
        this.output = options.output;
        this.startTimeout = options.startTimeout;
    }

    /** @return what {@link #serves()} checks, for messages ("answer PING") */
    protected abstract String servesWhen();

    /** @return whether the started process serves clients now; called again and again while it starts */
    protected abstract boolean serves();

    /**
     * Starts the process and waits until it serves; a subclass's builder calls it once, and
     * {@link #restart()} again.
     *
     * @throws ServerException if it cannot start, ends first, or does not serve in time
     */
    protected final void startProcess() {
        launch();
        awaitServes();
    }

    /**
     * Starts the process without waiting for it to serve: for a group whose members serve only
     * once enough of them run (a quorum). Follow with {@link #awaitServes()}.
     *
     * @throws ServerException if it cannot start
     */
    final void launch() {
        if (process != null) {
            // a start again on the same port, which can stay taken for a moment after a kill (another JVM's
            // free-port probe, a killed child's socket): the server would fail to bind it
            Await.until(kind + "'s port " + port + " to be free again", startTimeout, () -> FreePorts.bindable(port));
        }
        ManagedProcess.Launch launch =
                ManagedProcess.launch(kind + "-" + port, command).environment(environment());
        process = (output == null ? launch : launch.output(output)).start();
        paused = false;
    }

    /**
     * @return variables added to the process's environment at every start, for what must not be on
     *     its command line (a password); none by default
     */
    protected Map<String, String> environment() {
        return Map.of();
    }

    /**
     * Waits until the launched process serves; kills it if it does not.
     *
     * @throws ServerException if it ends first (with its output), or does not serve within the start timeout
     */
    final void awaitServes() {
        try {
            Await.until(kind + " on 127.0.0.1:" + port + " to " + servesWhen(), startTimeout, process, this::serves);
        } catch (RuntimeException e) {
            process.close();
            throw e;
        }
    }

    /**
     * The first half of {@link #heal()} for a group: resumes the server if paused and launches it
     * again if it is not running, without waiting for it to serve.
     *
     * @return whether it was launched again (then follow with {@link #awaitServes()})
     */
    final boolean healWithoutWaiting() {
        if (paused) {
            resume();
        }
        if (process.isAlive()) {
            return false;
        }
        process.close();
        launch();
        return true;
    }

    /** @return the running process, for a subclass's own faults and messages */
    protected final ManagedProcess process() {
        return process;
    }

    /** @return the port it serves clients on */
    public final int port() {
        return port;
    }

    /** @return {@code 127.0.0.1:PORT} */
    public final String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** @return the command that starts it, for messages */
    public final List<String> command() {
        return command;
    }

    /** @return its operating-system process id */
    public final long pid() {
        return process.pid();
    }

    /**
     * Kills the server with SIGKILL (no shutdown, nothing saved that was not already), with every
     * process it started (a PostgreSQL's backends), and waits until they have exited and its port
     * refuses connections: it can start again at once.
     *
     * @throws ServerException if either does not happen within 10 s (scaled)
     */
    public void kill() {
        Duration within = Timeouts.scaled(Duration.ofSeconds(10));
        process.kill(within);
        paused = false;
        Await.until(
                "killed " + kind + "'s port " + port + " to refuse connections",
                within,
                () -> !FreePorts.accepts(port));
    }

    /**
     * Stops the server process and the processes it started (SIGSTOP) and waits until the kernel
     * shows it stopped: it keeps its connections but answers nothing, nor do its children (a
     * PostgreSQL's backends).
     *
     * @throws ServerException if the signal cannot be sent, or the stop is not seen within 10 s (scaled)
     */
    public final void pause() {
        process.pause(Timeouts.scaled(Duration.ofSeconds(10)));
        paused = true;
    }

    /**
     * Lets a paused server and its children go on (SIGCONT) and waits until the kernel shows it running.
     *
     * @throws ServerException if the signal cannot be sent, or it still shows stopped after 10 s (scaled)
     */
    public final void resume() {
        process.resume(Timeouts.scaled(Duration.ofSeconds(10)));
        paused = false;
    }

    /** @return whether it was paused and not resumed since */
    public final boolean isPaused() {
        return paused;
    }

    /** @return whether its process is running (a paused one is) */
    public final boolean isRunning() {
        return process.isAlive();
    }

    /**
     * Starts the server again on the same port with the same command; kills it first if it still
     * runs. What it keeps across that is the kind's: nothing without persistence.
     *
     * @throws ServerException if it does not serve in time
     */
    public final void restart() {
        if (process.isAlive()) {
            kill();
        }
        process.close();
        startProcess();
    }

    /** Resumes the server if paused and starts it again if it is not running. */
    @Override
    public void heal() {
        if (healWithoutWaiting()) {
            awaitServes();
        }
    }

    /** Kills the server and the processes it started, and waits for it. */
    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
    }

    @Override
    public String toString() {
        return kind + " on " + hostPort();
    }

    /**
     * @param output the member's output file, or null for a temporary one
     * @param startTimeout how long it may take to serve
     * @return the options of one member of a group ({@link ZooKeeperEnsemble}, {@link EtcdCluster}),
     *     which the group's own builder sets for all of them
     */
    static Options<?> memberOptions(Path output, Duration startTimeout) {
        Options<?> options = new Member().startTimeout(startTimeout);
        options.output = output;
        return options;
    }

    /** The options of a group's member. */
    private static final class Member extends Options<Member> {}

    /**
     * The options every kind's builder has: port, output file, start timeout. Not thread-safe.
     *
     * @param <B> the kind's builder, returned by each setter
     */
    public abstract static class Options<B extends Options<B>> {
        private int port;
        private Path output;
        private Duration startTimeout = Timeouts.scaled(Duration.ofSeconds(10));

        protected Options() {}

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /**
         * @param port the port to serve on; 0 (the default) for a free one from {@link FreePorts}
         * @return this builder
         * @throws IllegalArgumentException if it is not a port number
         */
        public B port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
            }
            this.port = port;
            return self();
        }

        /**
         * @param output a file that the server's standard output and error are appended to, kept
         *     after close; by default they go to a temporary file shown in failure messages
         * @return this builder
         */
        public B output(Path output) {
            this.output = output;
            return self();
        }

        /**
         * @param startTimeout how long a start or restart may take until it serves; 10 s scaled by
         *     {@link Timeouts} by default
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public B startTimeout(Duration startTimeout) {
            this.startTimeout = Timeouts.positive("startTimeout", startTimeout);
            return self();
        }

        /** @return the start timeout set, for a group that starts its members itself */
        protected final Duration startTimeout() {
            return startTimeout;
        }

        /** @return the port asked for, or a free one from {@link FreePorts} if none was */
        protected final int portOrFree() {
            return port == 0 ? FreePorts.next() : port;
        }
    }
}
