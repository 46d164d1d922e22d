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
 * {@code io.cerberus} frame. Pins in other code (a library) are left out, and so is the JDK's
 * one-time work, which pins whoever the caller is: loading a class (a class loaded for the first time
 * from a jar blocks on the jar's monitor), initializing one (a thread that runs a static initializer,
 * or waits for another thread to finish it: the event's {@code pinnedReason}, JDK 24 and later, says
 * so), and linking a call site the first time it runs (a lambda's bootstrap is called by the VM; a
 * thread that meets a call site another is linking blocks in the VM at that bytecode, which the JDK
 * reports as a failed freeze with the Cerberus frame on top).
 * The one-time work happens on whatever path first reaches the class or call site, rare paths (a
 * failed ask withdrawn) included, so a warm-up round cannot be relied on to do all of it.
 */
public final class PinnedThreads {
    /** The JFR event of a virtual thread that blocked while pinned to its carrier. */
    public static final String EVENT = "jdk.VirtualThreadPinned";

    private PinnedThreads() {}

    /**
     * @param recording the recording file (it must not be empty)
     * @return each pinned event with a Cerberus frame, as the JDK's reason (when it gives one) and the top 12 frames
     * @throws IOException if the file cannot be read
     */
    public static List<String> inCerberus(Path recording) throws IOException {
        assertThat(Files.size(recording)).as("the recording").isPositive();
        return RecordingFile.readAllEvents(recording).stream()
                .filter(event -> event.getEventType().getName().equals(EVENT))
                .filter(PinnedThreads::hasCerberusFrame)
                .filter(event -> !initializingClass(event) && !blockedInTheVm(event) && !inOneTimeWork(event))
                .map(event -> (reason(event).isEmpty() ? "" : reason(event) + ": ")
                        + event.getStackTrace().getFrames().stream()
                                .limit(12)
                                .map(frame -> frame.getMethod().getType().getName() + "."
                                        + frame.getMethod().getName())
                                .toList())
                .toList();
    }

    /** Whether the JDK says the thread was pinned by a class's static initializer, its own or another thread's. */
    private static boolean initializingClass(RecordedEvent event) {
        String reason = reason(event);
        return reason.contains("initialization of ") || reason.contains(".<clinit>");
    }

    /**
     * Whether the thread blocked in the VM at a Cerberus bytecode, calling nothing: linking or resolving there. A wait
     * of Cerberus code shows the JDK's blocking frames above the Cerberus one; a monitor does not pin from JDK 24 on
     * unless the VM cannot unmount the thread, and JDK 21 reports no monitor enter.
     */
    private static boolean blockedInTheVm(RecordedEvent event) {
        List<RecordedFrame> frames = event.getStackTrace().getFrames();
        return reason(event).startsWith("Freeze or preempt failed")
                && !frames.isEmpty()
                && frames.get(0).getMethod().getType().getName().startsWith("io.cerberus.");
    }

    /** @return the event's {@code pinnedReason} (JDK 24 and later), or "" */
    private static String reason(RecordedEvent event) {
        return event.hasField("pinnedReason") && event.getString("pinnedReason") != null
                ? event.getString("pinnedReason")
                : "";
    }

    /** Whether a frame of class loading or call-site linkage lies above (is called by) the first Cerberus frame. */
    private static boolean inOneTimeWork(RecordedEvent event) {
        for (RecordedFrame frame : event.getStackTrace().getFrames()) {
            String type = frame.getMethod().getType().getName();
            String method = frame.getMethod().getName();
            if (type.startsWith("io.cerberus.")) {
                return false;
            }
            if ((type.equals("java.lang.ClassLoader") && method.equals("loadClass"))
                    || type.equals("java.lang.invoke.BootstrapMethodInvoker")
                    || (type.equals("java.lang.invoke.MethodHandleNatives") && method.startsWith("link"))) {
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
