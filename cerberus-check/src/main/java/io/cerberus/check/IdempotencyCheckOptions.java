package io.cerberus.check;

import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The options of {@code cerberus check --idempotency} (a mixin of {@link CheckOptions}, run by {@link IdempotencyCheck}). */
final class IdempotencyCheckOptions {
    @Option(
            names = "--idempotency",
            description =
                    "Check the idempotency guard instead of a lock: the clients submit the same"
                            + " operations (--keys keys, each many times, with retries) through the guard while faults are injected, each operation"
                            + " applying its effect to a ledger outside the engine; the report counts effects applied more than once. See SAFETY.md.")
    boolean enabled;

    @Option(
            names = "--keys",
            defaultValue = "50",
            description =
                    "With --idempotency: keys live at a time, 1 to 10000 (each lives eight leases; new ones keep coming)."
                            + " Default: ${DEFAULT-VALUE}")
    int keys;

    @Option(
            names = "--no-guard",
            description =
                    "With --idempotency, negative control: the operations run without the guard (must be UNSAFE).")
    boolean noGuard;

    @Option(
            names = "--unchecked-guard",
            description =
                    "With --idempotency, negative control (redis:// only): a hand-rolled guard whose"
                            + " completion and release do not check the attempt's owner (must be UNSAFE when an attempt is paused past its lease).")
    boolean uncheckedGuard;

    @Option(
            names = "--effect",
            defaultValue = "ledger",
            description = "With --idempotency: where an operation's effect is kept. ledger: a file outside the engine;"
                    + " table: a row in the jdbc: engine's database, inserted in the operation's transaction together"
                    + " with the guard's record (exactly once with your data); table-apart: that row committed on its own"
                    + " and the record after it (negative control). Default: ${DEFAULT-VALUE}")
    String effect;

    /** The values of {@code --effect}. */
    static final java.util.List<String> EFFECTS = java.util.List.of("ledger", "table", "table-apart");

    /** @return whether the effects are rows of the engine's database */
    boolean effectInTable() {
        return !effect.equals("ledger");
    }

    /** @return cerberus, none or unchecked */
    String guard() {
        return noGuard ? "none" : uncheckedGuard ? "unchecked" : "cerberus";
    }

    /**
     * @param server {@code --server}, or null
     * @param engineUri {@code --engine}, or null
     * @throws ParameterException naming the rule a combination breaks
     */
    void validate(CommandLine commandLine, boolean noLock, boolean noFencing, String server, String engineUri) {
        var parsed = commandLine.getParseResult();
        if (!enabled) {
            for (String option : new String[] {"--keys", "--no-guard", "--unchecked-guard", "--effect"}) {
                if (parsed.hasMatchedOption(option)) {
                    throw new ParameterException(commandLine, option + " applies to --idempotency");
                }
            }
            return;
        }
        if (noLock || noFencing) {
            throw new ParameterException(
                    commandLine,
                    (noLock ? "--no-lock" : "--no-fencing") + " applies to the lock check; the"
                            + " negative controls of --idempotency are --no-guard and --unchecked-guard");
        }
        if (keys < 1 || keys > 10_000) {
            throw new ParameterException(commandLine, "--keys must be 1 to 10000, was " + keys);
        }
        if (noGuard && uncheckedGuard) {
            throw new ParameterException(
                    commandLine, "give --no-guard or --unchecked-guard, not both: each is a negative control");
        }
        if (!EFFECTS.contains(effect)) {
            throw new ParameterException(commandLine, "--effect must be one of " + EFFECTS + ", was " + effect);
        }
        if (effectInTable()) {
            boolean sql = server != null
                    ? java.util.List.of("postgres", "mariadb", "h2").contains(server)
                    : engineUri != null && engineUri.startsWith("jdbc:") && !engineUri.startsWith("jdbc:datasource");
            if (!sql) {
                throw new ParameterException(
                        commandLine,
                        "--effect " + effect + " keeps the effects in the engine's SQL database: it needs --server"
                                + " postgres, mariadb or h2, or a jdbc: --engine");
            }
            if (noGuard || uncheckedGuard) {
                throw new ParameterException(
                        commandLine,
                        "--effect " + effect + " runs the operations through the guard; its negative control is"
                                + " --effect table-apart, not " + (noGuard ? "--no-guard" : "--unchecked-guard"));
            }
        }
        if (uncheckedGuard
                && !("redis".equals(server)
                        || (server == null && engineUri != null && engineUri.startsWith("redis://")))) {
            throw new ParameterException(
                    commandLine,
                    "--unchecked-guard is written over Redis: it needs --server redis or a redis:// --engine");
        }
    }
}
