package io.cerberus.testkit;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
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
    private final List<String> lines = new ArrayList<>();
    private final Handler handler = new Handler() {
        private final SimpleFormatter formatter = new SimpleFormatter();

        @Override
        public void publish(LogRecord record) {
            if (!isLoggable(record)) {
                return;
            }
            StringWriter text = new StringWriter();
            text.append(record.getLevel().getName()).append(' ').append(String.valueOf(record.getLoggerName())).append(": ")
                    .append(formatter.formatMessage(record));
            if (record.getThrown() != null) {
                text.append('\n');
                record.getThrown().printStackTrace(new PrintWriter(text));
            }
            synchronized (lines) {
                lines.add(text.toString());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
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

    /** @return the records captured so far, oldest first */
    public List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
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
