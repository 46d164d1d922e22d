package io.cerberus.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Builds the process of {@code cerberus exec}'s command: standard streams inherited, and on Linux
 * started through {@code setpriv --pdeathsig KILL} so that the kernel kills the command when
 * cerberus dies. Without that, a cerberus killed with SIGKILL would leave its command running
 * after the engine has freed the lock, and a second copy could start beside it.
 *
 * <p>The kernel sends the death signal when the <em>thread</em> that started the child ends, not
 * the process: the command must be started from a thread that lives until the command has ended
 * (cerberus starts it from the main thread and waits there).
 */
final class CommandLauncher {
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");
    private static final String DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

    private CommandLauncher() {}

    /** The command cannot be run; carries the exit code that says why. */
    static final class CannotRun extends Exception {
        private static final long serialVersionUID = 1L;
        private final int exitCode;

        CannotRun(int exitCode, String message) {
            super(message);
            this.exitCode = exitCode;
        }

        int exitCode() {
            return exitCode;
        }
    }

    /**
     * Checks that the program exists and is executable, as a shell would, so that a typo gets a
     * clear message before any lock is taken.
     *
     * @param program the program, a path (with {@code /}) or a name looked up in {@code PATH}
     * @throws CannotRun with 127 if it is not found, 126 if it cannot be executed
     */
    static void checkRunnable(String program) throws CannotRun {
        if (program.isEmpty()) {
            throw new CannotRun(ExitCodes.COMMAND_NOT_FOUND, "the command is empty");
        }
        if (program.contains("/")) {
            Path path = Path.of(program);
            if (!Files.exists(path)) {
                throw new CannotRun(ExitCodes.COMMAND_NOT_FOUND, program + ": no such file");
            }
            if (Files.isDirectory(path) || !Files.isExecutable(path)) {
                throw new CannotRun(
                        ExitCodes.CANNOT_EXECUTE,
                        program + ": "
                                + (Files.isDirectory(path) ? "is a directory" : "permission denied (not executable)"));
            }
            return;
        }
        String searchPath = System.getenv().getOrDefault("PATH", DEFAULT_PATH);
        for (String dir : searchPath.split(File.pathSeparator, -1)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return;
            }
        }
        throw new CannotRun(ExitCodes.COMMAND_NOT_FOUND, program + ": command not found");
    }

    /**
     * @param command the command and its arguments
     * @param environment variables to add to the inherited environment, less {@value EngineOptions#ENGINE_ENV}
     * @param dieWithParent whether to start it through {@code setpriv --pdeathsig KILL}
     * @return the process builder, standard streams inherited
     */
    static ProcessBuilder builder(List<String> command, Map<String, String> environment, boolean dieWithParent) {
        List<String> argv = new ArrayList<>();
        if (dieWithParent) {
            argv.addAll(List.of(SETPRIV.toString(), "--pdeathsig", "KILL", "--"));
        }
        argv.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(argv).inheritIO();
        // the engine URI may carry credentials: the user's command gets the lock, not the keys to the engine
        builder.environment().remove(EngineOptions.ENGINE_ENV);
        builder.environment().putAll(environment);
        return builder;
    }

    /**
     * @return whether {@code /usr/bin/setpriv} exists and understands {@code --pdeathsig} (util-linux
     *     2.33 and later)
     */
    static boolean canDieWithParent() {
        if (!Files.isExecutable(SETPRIV)) {
            return false;
        }
        try {
            Process probe = new ProcessBuilder(
                            SETPRIV.toString(), "--pdeathsig", "KILL", "--", SETPRIV.toString(), "--version")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            probe.getOutputStream().close();
            if (!probe.waitFor(10, TimeUnit.SECONDS)) {
                probe.destroyForcibly();
                return false;
            }
            return probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
