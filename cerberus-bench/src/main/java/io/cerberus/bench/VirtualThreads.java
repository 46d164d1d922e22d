package io.cerberus.bench;

import java.util.concurrent.ThreadFactory;

/**
 * Virtual threads for the {@code virtual-threads} workload, reached through reflection: the bench
 * compiles for Java 17, which has none, and runs them only on a JDK of 21 or newer.
 */
final class VirtualThreads {
    private VirtualThreads() {}

    /** @return whether this JVM has virtual threads (Java 21 or newer) */
    static boolean available() {
        return Runtime.version().feature() >= 21;
    }

    /**
     * @return {@code Thread.ofVirtual().factory()}
     * @throws IllegalStateException on a JVM without virtual threads ({@link #available()} is false)
     */
    static ThreadFactory factory() {
        if (!available()) {
            throw new IllegalStateException("virtual threads need Java 21 or newer; this is Java "
                    + Runtime.version().feature());
        }
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            return (ThreadFactory) Class.forName("java.lang.Thread$Builder")
                    .getMethod("factory")
                    .invoke(builder);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Thread.ofVirtual().factory() failed on Java " + Runtime.version(), e);
        }
    }
}
