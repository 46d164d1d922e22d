package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A recurring failure is one warning per episode, and its end one line that counts it. */
class FailureEpisodeTest {
    private static final String NAME = "io.cerberus.test.episodes";
    private final Logger logger = Logger.getLogger(NAME);
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final FailureEpisode episode =
            new FailureEpisode(System.getLogger(NAME), "withdraw attempts from engine 'etcd'");

    @BeforeEach
    void listen() {
        logger.setLevel(Level.INFO);
        logger.setUseParentHandlers(false);
        handler.setLevel(Level.ALL);
        logger.addHandler(handler);
    }

    @AfterEach
    void stopListening() {
        logger.removeHandler(handler);
        logger.setUseParentHandlers(true);
    }

    @Test
    void aThousandFailuresInARowAreOneWarningAndTheirEndOneLineThatCountsThem() {
        RuntimeException refused = new RuntimeException("etcdserver: too many requests");
        for (int i = 0; i < 1000; i++) {
            int n = i;
            episode.failed(() -> "attempt " + n, refused);
        }
        assertThat(episode.failuresInARow()).isEqualTo(1000);
        assertThat(records).hasSize(1);
        assertThat(records.get(0).getLevel()).isEqualTo(Level.WARNING);
        assertThat(records.get(0).getMessage())
                .isEqualTo(
                        "could not withdraw attempts from engine 'etcd': attempt 0 (further failures of this kind are"
                                + " logged at DEBUG until one succeeds)");
        assertThat(records.get(0).getThrown()).isSameAs(refused);

        episode.succeeded();
        episode.succeeded();
        assertThat(records).hasSize(2);
        assertThat(records.get(1).getLevel()).isEqualTo(Level.INFO);
        assertThat(records.get(1).getMessage())
                .isEqualTo("the failures to withdraw attempts from engine 'etcd' are over: it worked again after 1000"
                        + " failures in a row");
        assertThat(episode.failuresInARow()).isZero();
    }

    @Test
    void theNextEpisodeWarnsAgain() {
        RuntimeException refused = new RuntimeException("refused");
        episode.failed(() -> "first", refused);
        episode.succeeded();
        episode.failed(() -> "second", refused);
        assertThat(records).extracting(LogRecord::getLevel).containsExactly(Level.WARNING, Level.INFO, Level.WARNING);
        assertThat(records.get(1).getMessage()).endsWith("it worked again after 1 failure");
    }

    @Test
    void theFailuresAfterTheFirstAreDebugLines() {
        logger.setLevel(Level.ALL);
        RuntimeException refused = new RuntimeException("refused");
        episode.failed(() -> "a", refused);
        episode.failed(() -> "b", refused);
        assertThat(records).extracting(LogRecord::getLevel).containsExactly(Level.WARNING, Level.FINE);
        assertThat(records.get(1).getMessage())
                .isEqualTo("could not withdraw attempts from engine 'etcd' (failure 2 in a row): b: " + refused);
    }

    @Test
    void aSuccessOutsideAnEpisodeLogsNothing() {
        episode.succeeded();
        assertThat(records).isEmpty();
    }
}
