package io.cerberus.check.run;

import io.cerberus.check.log.HoldLog;
import io.cerberus.check.recipe.Recipe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * A recipe's failpoint in a check client ({@code --recipe} with {@code --faults between-steps}): armed by the checker,
 * which creates the client's {@code --armed} file, it makes the first loop to reach the recipe's weak moment crash or
 * stall there.
 */
final class RecipeFailpoint {
    private RecipeFailpoint() {}

    /**
     * @return the recipe's failpoint: when armed, the first loop to reach it disarms it, logs {@code failpoint crash}
     *     and halts the process, or logs {@code failpoint stall}, stalls for twice the lease + 200 ms and logs
     *     {@code failpoint stall over}
     */
    static Recipe.Failpoint of(String recipeName, Path armed, HoldLog log, String client, Duration lease) {
        Optional<Recipe.FailpointAction> action = Recipe.failpoint(recipeName);
        return () -> {
            if (armed == null || action.isEmpty() || !Files.exists(armed) || !deleted(armed)) {
                return;
            }
            if (action.get() == Recipe.FailpointAction.CRASH) {
                log.log("ENGINE", client, -1, "failpoint crash");
                Runtime.getRuntime().halt(137);
            }
            log.log("ENGINE", client, -1, "failpoint stall");
            Thread.sleep(lease.multipliedBy(2).plusMillis(200).toMillis());
            log.log("ENGINE", client, -1, "failpoint stall over");
        };
    }

    /** @return whether this call deleted the file (one loop of several wins) */
    private static boolean deleted(Path file) {
        try {
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            return false;
        }
    }
}
