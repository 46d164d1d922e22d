package io.cerberus.etcd;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The log records of one class while a test runs, every level included. The engine logs through
 * {@link System.Logger}, which goes to java.util.logging when nothing else is installed, as in
 * these tests.
 */
final class CapturedLog implements AutoCloseable {
    private static final SimpleFormatter FORMATTER = new SimpleFormatter();

    /** Held here: java.util.logging keeps loggers weakly, and a collected one would lose the handler. */
    private final Logger logger;
    private final Level previousLevel;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private CapturedLog(Class<?> source) {
        logger = Logger.getLogger(source.getName());
        previousLevel = logger.getLevel();
        handler.setLevel(Level.ALL);
        logger.setLevel(Level.ALL);
        logger.addHandler(handler);
    }

    /** @return a capture of what {@code source} logs, until closed */
    static CapturedLog of(Class<?> source) {
        return new CapturedLog(source);
    }

    /** @return the messages logged at {@code level}, parameters filled in */
    List<String> messages(Level level) {
        return records.stream().filter(record -> record.getLevel().equals(level)).map(FORMATTER::formatMessage).toList();
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
        logger.setLevel(previousLevel);
    }
}
