package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads a JFR recording made with {@code jdk.VirtualThreadPinned} enabled (with stack traces) for
 * the virtual threads pinned to their carrier in Cerberus code: the events whose stack has an
 * {@code io.cerberus} frame. Pins in other code (a library) are left out, and so are pins inside the
 * JDK's class loading (a class loaded for the first time from a jar blocks on the jar's monitor, a
 * one-time cost the JDK pins whoever the caller is).
 */
public final class PinnedThreads {
    /** The JFR event of a virtual thread that blocked while pinned to its carrier. */
    public static final String EVENT = "jdk.VirtualThreadPinned";

    private PinnedThreads() {}

    /**
     * @param recording the recording file (it must not be empty)
     * @return each pinned event with a Cerberus frame, as its top 12 frames
     * @throws IOException if the file cannot be read
     */
    public static List<String> inCerberus(Path recording) throws IOException {
        assertThat(Files.size(recording)).as("the recording").isPositive();
        return RecordingFile.readAllEvents(recording).stream()
                .filter(event -> event.getEventType().getName().equals(EVENT))
                .filter(PinnedThreads::hasCerberusFrame)
                .filter(event -> !inClassLoading(event))
                .map(event -> event.getStackTrace().getFrames().stream()
                        .limit(12)
                        .map(frame -> frame.getMethod().getType().getName() + "."
                                + frame.getMethod().getName())
                        .toList()
                        .toString())
                .toList();
    }

    /** Whether a class-loading frame lies above (is called by) the first Cerberus frame. */
    private static boolean inClassLoading(RecordedEvent event) {
        for (RecordedFrame frame : event.getStackTrace().getFrames()) {
            String type = frame.getMethod().getType().getName();
            if (type.startsWith("io.cerberus.")) {
                return false;
            }
            if (type.equals("java.lang.ClassLoader")
                    && frame.getMethod().getName().equals("loadClass")) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasCerberusFrame(RecordedEvent event) {
        return event.getStackTrace() != null
                && event.getStackTrace().getFrames().stream()
                        .map(RecordedFrame::getMethod)
                        .anyMatch(method -> method.getType().getName().startsWith("io.cerberus."));
    }
}
