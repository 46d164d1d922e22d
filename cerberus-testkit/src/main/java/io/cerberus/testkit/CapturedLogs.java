package io.cerberus.testkit;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The log records one logger (and its children) publishes through {@code java.util.logging}
 * while this is open: where Cerberus logs, and where SLF4J logs go when {@code slf4j-jdk14} is
 * the provider. Each record is kept as a user would read it: the formatted line, then the stack
 * trace of its exception, causes included.
 *
 * <p>Opening lowers the logger's level to {@code level} if it was higher; closing restores it and
 * removes the handler.
 */
public final class CapturedLogs implements AutoCloseable {
    private final Logger logger;
    private final Level previousLevel;
    private static final SimpleFormatter FORMATTER = new SimpleFormatter();
    /** Held here: java.util.logging keeps loggers weakly, and a collected one would lose the handler. */
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (isLoggable(record)) {
                records.add(record);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private CapturedLogs(Logger logger, Level level) {
        this.logger = logger;
        this.previousLevel = logger.getLevel();
        handler.setLevel(level);
        if (logger.getLevel() == null || logger.getLevel().intValue() > level.intValue()) {
            logger.setLevel(level);
        }
        logger.addHandler(handler);
    }

    /**
     * @param loggerName the logger to listen to ({@code ""} for every logger)
     * @param level the lowest level kept
     * @return the capture, open until {@link #close()}
     */
    public static CapturedLogs of(String loggerName, Level level) {
        return new CapturedLogs(Logger.getLogger(loggerName), level);
    }

    /** @return the records captured so far, oldest first: level, logger, message, and the exception's stack trace */
    public List<String> lines() {
        List<String> lines = new ArrayList<>();
        for (LogRecord record : records) {
            StringWriter text = new StringWriter();
            text.append(record.getLevel().getName())
                    .append(' ')
                    .append(String.valueOf(record.getLoggerName()))
                    .append(": ")
                    .append(FORMATTER.formatMessage(record));
            if (record.getThrown() != null) {
                text.append('\n');
                record.getThrown().printStackTrace(new PrintWriter(text));
            }
            lines.add(text.toString());
        }
        return lines;
    }

    /**
     * @param level a level
     * @return the messages captured at exactly that level, parameters filled in, oldest first
     */
    public List<String> messages(Level level) {
        return records.stream()
                .filter(record -> record.getLevel().equals(level))
                .map(FORMATTER::formatMessage)
                .toList();
    }

    /** @return the records captured so far, one after the other */
    public String text() {
        return String.join("\n", lines());
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
        logger.setLevel(previousLevel);
    }
}
