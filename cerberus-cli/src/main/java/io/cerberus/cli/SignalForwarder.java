package io.cerberus.cli;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Passes SIGTERM, SIGINT and SIGHUP that reach {@code cerberus exec} on to its command, so a
 * supervisor that stops cerberus stops the command, and cerberus can wait for it, release the lock
 * and exit with its status. Before the command has started, a signal interrupts the waiting thread
 * instead, and the command is never started.
 *
 * <p>Handlers are installed with {@code sun.misc.Signal} (module jdk.unsupported, the JDK's only
 * way to catch a signal). It is reached by reflection because javac warns about every direct use
 * of it with a warning no annotation can suppress, and this build fails on warnings. A signal the
 * process ignores from birth (SIGINT and SIGHUP under {@code nohup} or {@code &}) stays ignored.
 */
final class SignalForwarder {
    private static final List<String> FORWARDED = List.of("TERM", "INT", "HUP");
    private static final Map<String, Integer> NUMBERS = Map.of("HUP", 1, "INT", 2, "TERM", 15);
    private static final System.Logger LOG = System.getLogger(SignalForwarder.class.getName());

    private final Thread waiter;
    /** The command once started; guarded by this. */
    private Process child;
    /** The number of the first signal that came before the command started, or 0; guarded by this. */
    private int signalBeforeStart;

    private SignalForwarder(Thread waiter) {
        this.waiter = waiter;
    }

    /**
     * Catches the forwarded signals from now on, for the rest of the process's life.
     *
     * @param waiter the thread to interrupt when a signal comes before the command started
     * @return the forwarder
     */
    static SignalForwarder install(Thread waiter) {
        SignalForwarder forwarder = new SignalForwarder(waiter);
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
            Method getName = signalClass.getMethod("getName");
            Object handler = Proxy.newProxyInstance(
                    SignalForwarder.class.getClassLoader(),
                    new Class<?>[] {handlerClass},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            forwarder.received((String) getName.invoke(args[0]));
                            yield null;
                        }
                        case "equals" -> proxy == args[0];
                        case "hashCode" -> System.identityHashCode(proxy);
                        default -> "signal forwarder of cerberus exec";
                    });
            for (String name : FORWARDED) {
                try {
                    handle.invoke(null, signalClass.getConstructor(String.class).newInstance(name), handler);
                } catch (InvocationTargetException e) {
                    // the JVM uses this signal itself (-Xrs and the like): leave it as it is
                    LOG.log(
                            System.Logger.Level.INFO,
                            "SIG" + name + " is not forwarded: " + e.getCause().getMessage());
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "signals will not be forwarded to the command: this JVM has no sun.misc.Signal (" + e + ")");
        }
        return forwarder;
    }

    /**
     * Starts the command unless a signal came first.
     *
     * @param builder the command
     * @return the started command, or {@code null} if a signal came before it could start
     * @throws IOException if it cannot be started
     */
    synchronized Process start(ProcessBuilder builder) throws IOException {
        if (signalBeforeStart != 0) {
            return null;
        }
        child = builder.start();
        return child;
    }

    /**
     * @param number a signal number this class forwards
     * @return its name, {@code SIGTERM}
     */
    static String name(int number) {
        return NUMBERS.entrySet().stream()
                .filter(e -> e.getValue() == number)
                .map(e -> "SIG" + e.getKey())
                .findFirst()
                .orElse("signal " + number);
    }

    /** @return the number of the first signal received before the command started, or 0 */
    synchronized int signalBeforeStart() {
        return signalBeforeStart;
    }

    private void received(String name) {
        Process started;
        synchronized (this) {
            started = child;
            if (started == null) {
                if (signalBeforeStart == 0) {
                    signalBeforeStart = NUMBERS.get(name);
                }
                waiter.interrupt();
                return;
            }
        }
        if (started.isAlive()) {
            forward(name, started);
        }
    }

    private static void forward(String name, Process child) {
        try {
            Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(child.pid()))
                    .redirectErrorStream(true)
                    .start();
            kill.getOutputStream().close();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                LOG.log(
                        System.Logger.Level.WARNING,
                        "could not forward SIG" + name + " to the command (pid " + child.pid() + "): " + output);
            }
        } catch (IOException e) {
            if (name.equals("TERM")) {
                child.destroy();
            } else {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "could not forward SIG" + name + " to the command: no kill program (" + e.getMessage() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
