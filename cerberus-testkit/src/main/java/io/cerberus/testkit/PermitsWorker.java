package io.cerberus.testkit;

import io.cerberus.Cerberus;
import io.cerberus.DistributedSemaphore;
import io.cerberus.Permits;
import io.cerberus.servers.ManagedProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A child JVM whose threads take one permit of a semaphore at a time and count, in a file shared by
 * every worker, how many holders are inside at once and the most there ever were. The file is
 * updated under an OS file lock, so the count is exact across processes.
 *
 * <p>Arguments: {@code NAMESPACE NAME PERMITS COUNTER_FILE THREADS ITERATIONS}; the engine URI comes in
 * {@link ManagedProcess#ENGINE_ENV}. Prints {@code READY}, waits for {@code GO}, runs, prints
 * {@code DONE} (or {@code ERROR <exception>}).
 */
public final class PermitsWorker {
    private PermitsWorker() {}

    /**
     * @param args NAMESPACE NAME PERMITS COUNTER_FILE THREADS ITERATIONS
     * @throws Exception if the counter file fails or a thread is interrupted
     */
    public static void main(String[] args) throws Exception {
        int permits = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[4]);
        int iterations = Integer.parseInt(args[5]);
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(ManagedProcess.engineUri())
                        .namespace(args[0])
                        .build();
                RandomAccessFile counter = new RandomAccessFile(args[3], "rw")) {
            DistributedSemaphore semaphore = cerberus.semaphore(args[1], permits);
            System.out.println("READY");
            System.out.flush();
            String go = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (!"GO".equals(go)) {
                return;
            }
            List<Thread> running = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        for (int i = 0; i < iterations; i++) {
                            try (Permits permit = semaphore.acquire(1, Duration.ofSeconds(30))) {
                                add(counter, 1);
                                Thread.sleep(2);
                                add(counter, -1);
                                if (!permit.isValid()) {
                                    throw new IllegalStateException("permit lost while held");
                                }
                            }
                        }
                    } catch (Exception | Error e) {
                        failures.add(e);
                    }
                });
                thread.start();
                running.add(thread);
            }
            for (Thread thread : running) {
                thread.join();
            }
            System.out.println(failures.isEmpty() ? "DONE" : "ERROR " + failures.get(0));
        }
    }

    /** Makes this process's threads take turns at the file: an OS file lock is held per process, not per thread. */
    private static final ReentrantLock IN_THIS_PROCESS = new ReentrantLock();

    /** Adds to the holders inside, and raises the most seen, under an OS lock on the file. */
    private static void add(RandomAccessFile counter, int delta) throws IOException {
        IN_THIS_PROCESS.lock();
        try (FileLock lock = counter.getChannel().lock()) {
            counter.seek(0);
            long inside = counter.length() >= 16 ? counter.readLong() : 0;
            long most = counter.length() >= 16 ? counter.readLong() : 0;
            inside += delta;
            counter.seek(0);
            counter.writeLong(inside);
            counter.writeLong(Math.max(most, inside));
            if (!lock.isValid()) {
                throw new IOException("the counter's file lock was lost");
            }
        } finally {
            IN_THIS_PROCESS.unlock();
        }
    }

    /**
     * @param counter the file the workers shared
     * @return the most holders inside at once
     * @throws IOException if the file cannot be read
     */
    public static long most(java.nio.file.Path counter) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(counter.toFile(), "r")) {
            file.seek(8);
            return file.readLong();
        }
    }
}
