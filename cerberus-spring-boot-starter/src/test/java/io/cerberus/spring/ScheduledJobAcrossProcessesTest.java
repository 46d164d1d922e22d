package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Five processes of one application, each with a job scheduled every second under
 * {@link ExclusiveRun}, on one real Redis: every whole second of the run, the job ran exactly once,
 * and no instance logged a warning or an error for the ticks it skipped. Runs for
 * {@code -Dcerberus.scheduled.seconds} (8 by default; the figures in docs/LEADERSHIP.md are of 60).
 */
class ScheduledJobAcrossProcessesTest {
    private static final int INSTANCES = 5;
    private static final int SECONDS = Integer.getInteger("cerberus.scheduled.seconds", 8);

    @Test
    void fiveInstancesRunAJobScheduledEverySecondOncePerTickAndTheOthersSkipQuietly() throws Exception {
        Queue<String> lines = new ConcurrentLinkedQueue<>();
        CountDownLatch ready = new CountDownLatch(INSTANCES);
        List<ManagedProcess> instances = new ArrayList<>();
        try (RedisServer redis = RedisServer.start()) {
            try {
                for (int i = 0; i < INSTANCES; i++) {
                    String name = "instance-" + i;
                    instances.add(ManagedProcess.launch(
                                    name,
                                    io.cerberus.servers.JavaCommand.of(ScheduledInstance.class)
                                            .quickStart("256m")
                                            .args(name)
                                            .toList())
                            .environment(Map.of(ManagedProcess.ENGINE_ENV, redis.uri()))
                            .onLine(line -> {
                                lines.add(name + " " + line);
                                if (line.equals("READY")) {
                                    ready.countDown();
                                }
                            })
                            .start());
                }
                assertThat(ready.await(90, TimeUnit.SECONDS))
                        .as("five instances started")
                        .isTrue();
                long first = System.currentTimeMillis() / 1000 + 1;
                long last = first + SECONDS - 1;
                // the run: until the second after the last judged tick has begun
                while (System.currentTimeMillis() / 1000 <= last + 1) {
                    Thread.sleep(100);
                }
            } finally {
                instances.forEach(ManagedProcess::close);
            }
            judge(lines);
        }
    }

    private static void judge(Queue<String> lines) {
        // judged: the whole seconds after all instances were ready, up to the one before the stop
        TreeMap<Long, List<String>> runs = new TreeMap<>();
        List<String> complaints = new ArrayList<>();
        int skipLines = 0;
        for (String line : lines) {
            String[] words = line.split(" ", 4);
            if (words.length >= 3 && words[1].equals("RAN")) {
                runs.computeIfAbsent(Long.parseLong(words[2]), tick -> new ArrayList<>())
                        .add(words[0]);
            } else if (words.length >= 3
                    && words[1].equals("LOG")
                    && (words[2].equals("WARN") || words[2].equals("ERROR"))) {
                complaints.add(line);
            } else if (line.contains("skipped run 'reminders'")) {
                skipLines++;
            }
        }
        assertThat(complaints).as("warnings and errors logged by the instances").isEmpty();
        assertThat(runs).as("runs by tick").isNotEmpty();
        long first = runs.firstKey() + 1; // the first tick may have begun before every instance was up
        long last = runs.lastKey() - 1; // and the last may have been cut by the stop
        for (long tick = first; tick <= last; tick++) {
            assertThat(runs.getOrDefault(tick, List.of()))
                    .as("instances that ran the tick of second %d (all runs: %s)", tick, runs)
                    .hasSize(1);
        }
        assertThat(last - first + 1).as("ticks judged").isGreaterThanOrEqualTo(SECONDS - 3);
        assertThat(skipLines).as("DEBUG lines of skipped runs").isGreaterThan(0);
        System.out.printf(
                "scheduled every second, %d instances: %d ticks judged, each run once; %d skip lines%n",
                INSTANCES, last - first + 1, skipLines);
    }
}
