package io.cerberus.check.judge;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One hold of a lock as its client believed it: from the grant to its release, its loss notice,
 * the client's kill or stop, or the run's end.
 *
 * @param client the client or loop ({@code c1}, {@code c1.3})
 * @param lock the lock's index
 * @param token the fencing token, -1 without one
 * @param end how it ended: released, lost, killed, stopped, run ended
 * @param write what the register answered to its writes
 */
public record Hold(String client, int lock, long token, long startNanos, long endNanos, String end, String write) {
    /** @return whether both held the same lock at some moment */
    public boolean overlaps(Hold other) {
        return lock == other.lock && startNanos < other.endNanos && other.startNanos < endNanos;
    }

    /**
     * @return what the register answered, for people: as logged ({@code ok}, {@code ok,stale}) up to three answers,
     *     else counted in order of first answer ({@code 63 ok, 1 stale}), as a long-lived leader writes many times a term
     */
    public String writeText() {
        String[] answers = write.split(",");
        if (answers.length <= 3) {
            return write;
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String answer : answers) {
            counts.merge(answer, 1, Integer::sum);
        }
        return counts.entrySet().stream()
                .map(count -> count.getValue() + " " + count.getKey())
                .collect(Collectors.joining(", "));
    }

    /** @return whether this hold was made by that process (the client itself, or one of its loops) */
    boolean heldBy(String process) {
        return client.equals(process) || client.startsWith(process + ".");
    }
}
