package io.cerberus.virtualthreads;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.PinnedThreads;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PinnedThreads} leaves out the JDK's one-time work: a virtual thread that runs a class's static
 * initializer, or waits for another to, is pinned meanwhile whoever calls it, Cerberus code included.
 */
@EnabledForJreRange(
        min = JRE.JAVA_24,
        disabledReason = "the JDK names why a thread was pinned from Java 24 on: run with"
                + " -Dvirtual-threads.java=<a newer JDK's bin/java> (./test-all finds one)")
class PinnedThreadsTest {
    @TempDir
    Path recordings;

    @Test
    void aClassBeingInitializedIsTheJdksPinNotCerberuss() throws Exception {
        Path recorded = recordings.resolve("pinned.jfr");
        try (Recording recording = new Recording()) {
            recording.enable(PinnedThreads.EVENT).withStackTrace().withThreshold(Duration.ZERO);
            recording.start();
            ExecutorService virtual = (ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            for (int i = 0; i < 4; i++) {
                virtual.submit(SlowToInitialize::value);
            }
            virtual.shutdown();
            assertThat(virtual.awaitTermination(1, TimeUnit.MINUTES))
                    .as("threads done")
                    .isTrue();
            recording.stop();
            recording.dump(recorded);
        }
        assertThat(RecordingFile.readAllEvents(recorded))
                .as("pins of this test's (Cerberus) code while the class was initialized")
                .anySatisfy(event -> assertThat(event.getStackTrace().getFrames())
                        .anySatisfy(
                                frame -> assertThat(frame.getMethod().getType().getName())
                                        .startsWith("io.cerberus.")));
        assertThat(PinnedThreads.inCerberus(recorded)).isEmpty();
    }

    /** A class whose static initializer parks its thread a moment. */
    private static final class SlowToInitialize {
        static {
            try {
                new CountDownLatch(1).await(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        static int value() {
            return 1;
        }
    }
}
