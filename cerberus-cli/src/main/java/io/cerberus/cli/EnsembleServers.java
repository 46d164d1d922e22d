package io.cerberus.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A lock server that is an ensemble with a leader (ZooKeeper, etcd): its faults kill one member —
 * the leader ({@code leader-kill}) or the next one in turn ({@code server-kill}) — keep it down,
 * and start it again until it has rejoined.
 */
abstract class EnsembleServers implements LockServer {

    @Override
    public final void inject(String fault, Duration down, Consumer<String> record) throws IOException, InterruptedException {
        String killed = kill(fault);
        record.accept(fault + " " + killed);
        Thread.sleep(down.toMillis());
        String restarted = restart();
        record.accept("server-restart " + restarted);
        record.accept("confirmed " + fault + ": " + killed + " exited of SIGKILL with its port closed, then " + restarted);
    }

    /**
     * Kills the member {@code fault} names with SIGKILL and confirms it: the process exited and its
     * port refuses connections.
     *
     * @return which member, and its role when it was killed ({@code member 2 (leader)})
     */
    abstract String kill(String fault) throws IOException, InterruptedException;

    /**
     * Starts the member the last {@link #kill} took down, on the same ports and data, and waits
     * until it has rejoined the ensemble.
     *
     * @return which member, and how it came back
     */
    abstract String restart() throws IOException, InterruptedException;
}
