package io.cerberus.servers;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

/**
 * The command line of a child JVM: this JVM's {@code java}, a class path (this JVM's by default),
 * JVM options, a main class and its arguments. The one place a child JVM's command is written,
 * for test children, the demo's and the checker's workers, the bench's second process, ZooKeeper
 * and H2. Not thread-safe; {@link #toList()} may be called again after more changes.
 */
public final class JavaCommand {
    private final String mainClass;
    private String classPath = System.getProperty("java.class.path", "");
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<String> args = new ArrayList<>();

    private JavaCommand(String mainClass) {
        if (mainClass == null || mainClass.isBlank()) {
            throw new IllegalArgumentException("a child JVM needs a main class, was '" + mainClass + "'");
        }
        this.mainClass = mainClass;
    }

    /**
     * @param mainClass the class whose {@code main} the child runs
     * @return a command running it with this JVM's class path, no options and no arguments
     */
    public static JavaCommand of(Class<?> mainClass) {
        return new JavaCommand(mainClass.getName());
    }

    /**
     * @param mainClass the fully qualified name of the class whose {@code main} the child runs,
     *     for a class this JVM need not load (ZooKeeper's server)
     * @return a command running it with this JVM's class path, no options and no arguments
     * @throws IllegalArgumentException if the name is blank
     */
    public static JavaCommand of(String mainClass) {
        return new JavaCommand(mainClass);
    }

    /** @return the {@code java} launcher of the JDK this JVM runs on */
    public static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /**
     * @param classPath the child's class path instead of this JVM's
     * @return this command
     * @throws IllegalArgumentException if it is empty
     */
    public JavaCommand classPath(String classPath) {
        this.classPath = checkedClassPath(classPath);
        return this;
    }

    /**
     * @param classPath a class path a caller was given for a child JVM
     * @return it, if it is not empty
     * @throws IllegalArgumentException if it is empty
     */
    static String checkedClassPath(String classPath) {
        if (classPath == null || classPath.isBlank()) {
            throw new IllegalArgumentException("the class path must not be empty");
        }
        return classPath;
    }

    /**
     * Options for a child that starts often and computes little (a worker holding a lock, a test
     * child): C1 only, the serial collector, class-data sharing, and the given heap.
     *
     * @param heap the largest heap, e.g. {@code 128m}
     * @return this command
     */
    public JavaCommand quickStart(String heap) {
        return jvmOptions("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx" + heap);
    }

    /**
     * Hands this JVM's test time scale ({@link Timeouts#SCALE_PROPERTY}) to the child, so its
     * deadlines stretch as the parent's do.
     *
     * @return this command
     */
    public JavaCommand timeScale() {
        return jvmOptions("-D" + Timeouts.SCALE_PROPERTY + "=" + Timeouts.scale());
    }

    /**
     * @param options JVM options, before the main class, e.g. {@code -Xmx256m}
     * @return this command
     */
    public JavaCommand jvmOptions(String... options) {
        jvmOptions.addAll(List.of(options));
        return this;
    }

    /**
     * @param args the main class's arguments, added after those given before
     * @return this command
     */
    public JavaCommand args(String... args) {
        return args(List.of(args));
    }

    /**
     * @param args the main class's arguments, added after those given before
     * @return this command
     */
    public JavaCommand args(List<String> args) {
        this.args.addAll(args);
        return this;
    }

    /**
     * Checks that the class path holds the main class, so that a child JVM that would fail to find
     * it is not started: for a server run from the caller's class path (ZooKeeper, H2), which this
     * module does not depend on. An entry {@code dir/*} is searched for jars as the JVM does.
     *
     * @param remedy what the caller does to put it there, for the message, e.g.
     *     {@code depend on com.h2database:h2}
     * @return this command
     * @throws ServerException if no entry of the class path holds it, naming the class, the class path and the remedy
     */
    public JavaCommand requireMainClass(String remedy) {
        String resource = mainClass.replace('.', '/') + ".class";
        for (String entry : classPath.split(File.pathSeparator)) {
            if (entry.endsWith("*")) {
                try (DirectoryStream<Path> jars =
                        Files.newDirectoryStream(Path.of(entry.substring(0, entry.length() - 1)), "*.jar")) {
                    for (Path jar : jars) {
                        if (holds(jar, resource)) {
                            return this;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // not a directory: not on the class path either
                }
            } else if (holds(Path.of(entry.isEmpty() ? "." : entry), resource)) {
                return this;
            }
        }
        throw new ServerException(mainClass + " is not on the class path the child JVM would start with ("
                + (classPath.length() > 300 ? classPath.substring(0, 300) + "..." : classPath) + "); " + remedy);
    }

    private static boolean holds(Path entry, String resource) {
        if (Files.isDirectory(entry)) {
            return Files.isRegularFile(entry.resolve(resource));
        }
        if (!Files.isRegularFile(entry)) {
            return false;
        }
        try (JarFile jar = new JarFile(entry.toFile())) {
            return jar.getEntry(resource) != null;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the command line: java, options, {@code -cp}, class path, main class, arguments */
    public List<String> toList() {
        List<String> command = new ArrayList<>();
        command.add(java().toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass);
        command.addAll(args);
        return List.copyOf(command);
    }

    /** @return the simple name of the main class, a short name for messages */
    public String simpleName() {
        return mainClass.substring(mainClass.lastIndexOf('.') + 1);
    }
}
