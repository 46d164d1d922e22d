package io.cerberus.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One {@code check-worker} JVM as the checker sees it: its process and what it last announced. */
final class CheckClient {
    private final String name;
    private final Process process;
    private volatile String state = "STARTING";
    private volatile boolean paused;
    private volatile boolean ready;

    private CheckClient(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(this::readOutput, "check-client-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    static CheckClient start(String name, List<String> workerArgs, String engineUri) {
        List<String> args = new ArrayList<>(List.of("--client", name));
        args.addAll(workerArgs);
        return new CheckClient(name, DemoInstance.startWorker("check-worker", args, engineUri, "check client " + name));
    }

    private void readOutput() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                state = line.split(" ", 2)[0];
                ready |= state.equals("READY");
            }
        } catch (IOException e) {
            // ended
        }
        state = "EXITED";
    }

    String name() {
        return name;
    }

    /** @return the last announcement: READY, HOLD, READ, FREE, or STARTING / EXITED */
    String state() {
        return state;
    }

    /** @return whether the client announced READY (it may have moved on since) */
    boolean ready() {
        return ready;
    }

    boolean alive() {
        return process.isAlive();
    }

    boolean paused() {
        return paused;
    }

    /** Sends SIGSTOP and waits until the kernel shows the process stopped. */
    void pause(Duration confirmWithin) throws InterruptedException {
        signal("STOP");
        paused = true;
        awaitProcState('T', confirmWithin, "stopped");
    }

    /** Sends SIGCONT and waits until the process runs again. */
    void resume(Duration confirmWithin) throws InterruptedException {
        signal("CONT");
        paused = false;
        long deadline = System.nanoTime() + confirmWithin.toNanos();
        while (procState() == 'T') {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("client " + name + " (pid " + process.pid() + ") did not resume after SIGCONT");
            }
            Thread.sleep(5);
        }
    }

    /** Kills with SIGKILL and waits for the process to end. */
    void kill(Duration confirmWithin) throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(confirmWithin.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("client " + name + " (pid " + process.pid() + ") did not die of SIGKILL");
        }
    }

    /** Closes the client's input (it stops after its current round) and waits; kills it if it does not stop. */
    void stop(Duration within) throws InterruptedException {
        if (paused) {
            resume(within);
        }
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // already gone
        }
        if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            kill(within);
        }
    }

    private void signal(String signal) throws InterruptedException {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill (package procps)", e);
        }
    }

    private void awaitProcState(char wanted, Duration within, String what) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (procState() != wanted) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("client " + name + " (pid " + process.pid() + ") was not " + what + " in time");
            }
            Thread.sleep(2);
        }
    }

    /** @return the state letter of /proc/PID/stat ('T' when stopped), '?' when unreadable */
    private char procState() {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException | RuntimeException e) {
            return '?';
        }
    }
}
