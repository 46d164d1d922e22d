package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Short {@code cerberus check} runs for the tests, and what they read from a run: the report's
 * counts, the faults injected and confirmed, the events the clients and the fault loop logged.
 */
final class CheckRuns {
    /** How long one short run may take, servers' start and stop included (scaled by {@link Cli}). */
    static final Duration RUN_LIMIT = Duration.ofSeconds(90);

    private CheckRuns() {}

    /**
     * Runs {@code cerberus check --out DIR/out} with the short defaults (a 6 s run, lease 500 ms,
     * a fault every second, think 100 ms) where the arguments do not give their own.
     */
    static Cli.Result check(Path dir, String... args) {
        List<String> given = List.of(args);
        List<String> all =
                new ArrayList<>(List.of("check", "--out", dir.resolve("out").toString()));
        String[][] defaults = {{"--duration", "6s"}, {"--lease", "500ms"}, {"--fault-every", "1s"}, {"--think", "100ms"}
        };
        for (String[] option : defaults) {
            if (!given.contains(option[0])) {
                all.addAll(List.of(option));
            }
        }
        all.addAll(given);
        return Cli.run(RUN_LIMIT, all.toArray(String[]::new));
    }

    /** @return the number after {@code label:} in the report */
    static long count(String report, String label) {
        Matcher m = Pattern.compile(Pattern.quote(label) + ":\\s+(\\d+)").matcher(report);
        assertThat(m.find()).as("'%s' in the report:%n%s", label, report).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** @return how many times the fault (or step) was injected, from the report */
    static int injected(String report, String fault) {
        Matcher m = Pattern.compile("faults injected:\\s+\\d+: \\{.*\\b" + fault + "=(\\d+)")
                .matcher(report);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** @return how many times the fault was confirmed, from the report, which must show none unconfirmed */
    static int confirmed(String report, String fault) {
        assertThat(report).as("faults the checker could not confirm").doesNotContain("NOT confirmed");
        Matcher m = Pattern.compile("faults confirmed:\\s+\\d+: \\{.*\\b" + fault + "=(\\d+)")
                .matcher(report);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** @return every event the run's clients and fault loop logged, in time order */
    static List<HoldLog.Event> events(Path dir) {
        return HoldLog.readAll(dir.resolve("out"));
    }

    /** @return the events of {@link #events} of one kind ({@code ACQ}, {@code FAULT}, ...) */
    static List<HoldLog.Event> events(Path dir, String kind) {
        return events(dir).stream().filter(event -> event.kind().equals(kind)).toList();
    }

    /** @return the text of a file of the run's directory ({@code faults.log}, {@code report.txt}) */
    static String file(Path dir, String name) {
        try {
            return java.nio.file.Files.readString(dir.resolve("out").resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
