package io.cerberus.check.console;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Locale;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Routes the library's {@link System.Logger} output (java.util.logging by default) to standard
 * error as one line per record, warnings and worse only, so a routine run prints nothing but its
 * own output. The client libraries' records (Lettuce, Netty, gRPC, ZooKeeper, the JDBC drivers)
 * are shown only when SEVERE (xmemcached's not even then: it logs every failed reconnect as an
 * error): Cerberus reports what their warnings mean (an engine it cannot reach,
 * a lost lock) in its own words, once, where a reconnecting client would repeat itself every
 * second. {@code --verbose} shows every record from INFO up, and stack traces.
 */
public final class ConsoleLogging {
    private static volatile boolean verbose;

    private ConsoleLogging() {}

    /** Replaces the JDK's default console logging; call once, first thing in {@code main}. */
    public static void configure() {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        ConsoleHandler handler = new ConsoleHandler();
        handler.setLevel(Level.ALL);
        handler.setFormatter(new OneLine());
        handler.setFilter(record -> verbose
                || fromCerberus(record)
                || record.getLevel().intValue() >= Level.SEVERE.intValue() && !fromReconnectingMemcachedClient(record));
        root.addHandler(handler);
        root.setLevel(Level.WARNING);
    }

    private static boolean fromCerberus(LogRecord record) {
        String logger = record.getLoggerName();
        return logger != null && logger.startsWith("io.cerberus");
    }

    /**
     * xmemcached logs each failed reconnect to a server that is down as an error, once a second;
     * the engine says once, in its own words, that the server cannot be reached.
     */
    private static boolean fromReconnectingMemcachedClient(LogRecord record) {
        String logger = record.getLoggerName();
        return logger != null
                && (logger.startsWith("net.rubyeye.xmemcached") || logger.startsWith("com.google.code.yanf4j"));
    }

    /** Shows INFO records and stack traces from now on. */
    public static void beVerbose() {
        verbose = true;
        Logger.getLogger("").setLevel(Level.INFO);
    }

    /** @return whether {@code --verbose} was given */
    public static boolean isVerbose() {
        return verbose;
    }

    private static final class OneLine extends Formatter {
        @Override
        public String format(LogRecord record) {
            StringBuilder line = new StringBuilder("cerberus: ")
                    .append(record.getLevel().getName().toLowerCase(Locale.ROOT))
                    .append(": ")
                    .append(formatMessage(record));
            Throwable thrown = record.getThrown();
            if (thrown != null && verbose) {
                StringWriter trace = new StringWriter();
                thrown.printStackTrace(new PrintWriter(trace));
                line.append(System.lineSeparator()).append(trace.toString().stripTrailing());
            } else if (thrown != null) {
                line.append(": ").append(thrown.getMessage());
            }
            return line.append(System.lineSeparator()).toString();
        }
    }
}
