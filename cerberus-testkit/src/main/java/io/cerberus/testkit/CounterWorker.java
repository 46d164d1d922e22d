package io.cerberus.testkit;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.servers.ManagedProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;

/**
 * A child JVM that increments a plain counter in a file, under a lock, with a deliberately
 * non-atomic read-modify-write: any overlap of two holders loses an increment.
 *
 * <p>Arguments: {@code NAMESPACE NAME COUNTER_FILE ITERATIONS}; the engine URI comes in
 * {@link ManagedProcess#ENGINE_ENV}. Prints {@code READY}, waits
 * for {@code GO} on standard input, runs, prints {@code DONE}.
 */
public final class CounterWorker {
    private CounterWorker() {}

    /**
     * @param args NAMESPACE NAME COUNTER_FILE ITERATIONS
     * @throws IOException if the counter file fails
     */
    public static void main(String[] args) throws IOException {
        int iterations = Integer.parseInt(args[3]);
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(ManagedProcess.engineUri())
                        .namespace(args[0])
                        .build();
                RandomAccessFile counter = new RandomAccessFile(args[2], "rw")) {
            DistributedLock lock = cerberus.lock(args[1]);
            System.out.println("READY");
            System.out.flush();
            String go = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (!"GO".equals(go)) {
                return;
            }
            for (int i = 0; i < iterations; i++) {
                lock.lock();
                try {
                    counter.seek(0);
                    long value = counter.length() >= 8 ? counter.readLong() : 0;
                    Thread.onSpinWait();
                    counter.seek(0);
                    counter.writeLong(value + 1);
                } finally {
                    lock.unlock();
                }
            }
            System.out.println("DONE");
        }
    }
}
