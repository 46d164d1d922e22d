package io.cerberus.check.recipe;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A hand-rolled lock from the classic articles, run by {@code cerberus check --recipe NAME} as a
 * negative control: the same clients, faults and judge as for a Cerberus engine, so a reader sees
 * what each recipe gets wrong and which fault shows it. None gives a fencing token, none renews;
 * each is written as the articles wrote it, not fixed.
 *
 * <p>A recipe has at most one <em>failpoint</em>: the moment between its two commands where a
 * fault does the most harm. The {@code between-steps} fault arms it on one client; the recipe calls
 * {@link Failpoint#reached} there, which kills the process (a crash) or stalls the calling thread
 * (a pause), as its {@link FailpointAction} says.
 */
public interface Recipe extends AutoCloseable {

    /** The recipes {@code --recipe} takes. */
    List<String> NAMES =
            List.of("setnx-expire", "setnx-getset", "set-nx-px-del", "check-then-delete", "no-renewal", "unique-row");

    /** What a recipe's failpoint does when the {@code between-steps} fault has armed it. */
    enum FailpointAction {
        /** Dies there (the process halts: a crash, a deployment, the OOM killer). */
        CRASH,
        /** Stalls the calling thread there for twice the lease (a GC pause, a slow network). */
        STALL
    }

    /** Called by a recipe at its failpoint. */
    @FunctionalInterface
    interface Failpoint {
        void reached() throws InterruptedException;
    }

    /** A lock a recipe believes it holds. */
    interface Hold {
        /** Releases it, the recipe's way. */
        void release();
    }

    /**
     * @param name one of {@link #NAMES}
     * @param engineUri a {@code redis://} URI (every recipe but {@code unique-row}) or a {@code jdbc:} URL
     * @param lease the recipe's expiry
     * @param failpoint what the failpoint does when reached
     * @return the recipe, connected
     * @throws IllegalArgumentException if the name is unknown or the URI of the wrong kind
     */
    static Recipe connect(String name, String engineUri, Duration lease, Failpoint failpoint) {
        return switch (name) {
            case "unique-row" -> UniqueRowRecipe.connect(engineUri, lease);
            case "setnx-expire", "setnx-getset", "set-nx-px-del", "check-then-delete", "no-renewal" ->
                RedisRecipe.connect(name, engineUri, lease, failpoint);
            default ->
                throw new IllegalArgumentException(
                        "--recipe takes " + String.join(", ", NAMES) + "; '" + name + "' is none of them");
        };
    }

    /** @return the engine URIs a recipe runs on, for messages */
    static String needs(String name) {
        return name.equals("unique-row")
                ? "a jdbc: URL (--server postgres, mariadb or h2, or --engine jdbc:...)"
                : "a redis:// URI of one server (--server redis, or --engine redis://...)";
    }

    /** @return whether the recipe runs on that engine URI */
    static boolean runsOn(String name, String engineUri) {
        return name.equals("unique-row")
                ? engineUri.startsWith("jdbc:")
                : engineUri.startsWith("redis://") || engineUri.startsWith("rediss://");
    }

    /** @return what the recipe's failpoint does, if it has one */
    static Optional<FailpointAction> failpoint(String name) {
        return switch (name) {
            case "setnx-expire" -> Optional.of(FailpointAction.CRASH);
            case "check-then-delete" -> Optional.of(FailpointAction.STALL);
            default -> Optional.empty();
        };
    }

    /**
     * Tries to take the lock until {@code wait} has passed.
     *
     * @return the hold, or empty if another held it all along
     */
    Optional<Hold> tryAcquire(String lockName, Duration wait) throws InterruptedException;

    @Override
    void close();
}
