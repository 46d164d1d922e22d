package io.cerberus.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Finds the Java examples of a page of docs, and compiles Java source held in a string against the test's class path,
 * in memory, and loads the result over the test's class loader. A source that does not compile
 * fails the test with each error's line and the source.
 */
public final class JavaSources {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

    private JavaSources() {}

    /**
     * @param markdown a page of docs
     * @return the contents of its {@code ```java} blocks, in order
     */
    public static List<String> javaBlocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(markdown);
        while (block.find()) {
            blocks.add(block.group(1));
        }
        return blocks;
    }

    /**
     * @param className the class to load once compiled, with its package
     * @param source the source of one compilation unit declaring it
     * @param what what the source is, for the failure's message (e.g. "the README's Java examples")
     * @return the class, loaded over this class's loader
     * @throws AssertionError naming each error's line, and showing the source, when it does not compile
     * @throws ClassNotFoundException when the source does not declare {@code className}
     */
    public static Class<?> compile(String className, String source, String what) throws ClassNotFoundException {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException(
                    what + " need a JDK's compiler; this runtime (" + System.getProperty("java.home") + ") has none");
        }
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8);
        InMemoryClasses classes = new InMemoryClasses(files);
        JavaFileObject unit =
                new SimpleJavaFileObject(
                        URI.create("string:///" + className.replace('.', '/') + ".java"), JavaFileObject.Kind.SOURCE) {
                    @Override
                    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                        return source;
                    }
                };
        boolean compiled = compiler.getTask(
                        null, classes, diagnostics, List.of("-classpath", classPath, "-proc:none"), null, List.of(unit))
                .call();
        if (!compiled) {
            StringBuilder errors = new StringBuilder(what + " do not compile:\n");
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                errors.append("line ")
                        .append(d.getLineNumber())
                        .append(": ")
                        .append(d.getMessage(null))
                        .append('\n');
            }
            throw new AssertionError(errors.append("in\n").append(source));
        }
        return classes.loader().loadClass(className);
    }

    /** Keeps the compiled classes in memory and loads them over the test's class loader. */
    private static final class InMemoryClasses extends ForwardingJavaFileManager<JavaFileManager> {
        private final Map<String, ByteArrayOutputStream> bytes = new ConcurrentHashMap<>();

        InMemoryClasses(JavaFileManager files) {
            super(files);
        }

        @Override
        public JavaFileObject getJavaFileForOutput(
                Location location, String className, JavaFileObject.Kind kind, FileObject sibling) {
            return new SimpleJavaFileObject(
                    URI.create("bytes:///" + className.replace('.', '/') + kind.extension), kind) {
                @Override
                public OutputStream openOutputStream() {
                    return bytes.computeIfAbsent(className, name -> new ByteArrayOutputStream());
                }
            };
        }

        ClassLoader loader() {
            return new ClassLoader(JavaSources.class.getClassLoader()) {
                @Override
                protected Class<?> findClass(String name) throws ClassNotFoundException {
                    ByteArrayOutputStream compiled = bytes.get(name);
                    if (compiled == null) {
                        throw new ClassNotFoundException(name);
                    }
                    byte[] code = compiled.toByteArray();
                    return defineClass(name, code, 0, code.length);
                }
            };
        }
    }
}
