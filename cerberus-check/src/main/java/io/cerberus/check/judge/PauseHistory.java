package io.cerberus.check.judge;

import io.cerberus.check.log.HoldLog;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What a lock check's event logs say about a client's time: when its acquire call started (its
 * {@code acquire Nms} line), when it was paused, and which process a loop belongs to. A pause delays
 * a client's log lines, so a grant is placed at the time it was certainly in hand.
 */
final class PauseHistory {
    private PauseHistory() {}

    /**
     * A grant's acquire line.
     *
     * @param askedAt when its call started: the line's time less the time the call took
     * @param inHand when the line was written, so when the grant was certainly in hand
     */
    record AcquireLine(long askedAt, long inHand) {}

    /** @return when the acquire call a worker's {@code acquire Nms} line reports was made */
    static Optional<Long> acquireStart(HoldLog.Event event) {
        String detail = event.detail();
        if (!detail.startsWith("acquire ") || !detail.endsWith("ms")) {
            return Optional.empty();
        }
        try {
            long took = Long.parseLong(detail.substring("acquire ".length(), detail.length() - 2));
            return Optional.of(event.nanos() - TimeUnit.MILLISECONDS.toNanos(took));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** @return whether the client was paused at some moment from {@code from} to {@code to} */
    static boolean pausedBetween(List<LockJudgement.Fault> faults, String client, long from, long to) {
        boolean paused = false;
        for (LockJudgement.Fault fault : faults) {
            if (!ofProcess(client, fault.client()) || fault.nanos() > to) {
                continue;
            }
            if (fault.kind().equals("pause") || fault.kind().startsWith("pause ")) {
                paused = true;
                if (fault.nanos() >= from) {
                    return true;
                }
            } else if (fault.kind().equals("resume")) {
                if (paused && fault.nanos() >= from) {
                    return true; // paused before the call, resumed during it
                }
                paused = false;
            }
        }
        return paused;
    }

    /**
     * @return when the client's process was last paused, if it was paused (and not yet resumed) at
     *     {@code at}; -1 if it was running then
     */
    static long stoppedSince(List<LockJudgement.Fault> faults, String client, long at) {
        long since = -1;
        for (LockJudgement.Fault fault : faults) {
            if (fault.nanos() > at) {
                break;
            }
            if (!ofProcess(client, fault.client())) {
                continue;
            }
            if (fault.kind().equals("pause") || fault.kind().startsWith("pause ")) {
                since = fault.nanos();
            } else if (fault.kind().equals("resume")) {
                since = -1;
            }
        }
        return since;
    }

    /** @return the process of a client ({@code c1} of {@code c1.3}) */
    static String process(String client) {
        int dot = client.indexOf('.');
        return dot < 0 ? client : client.substring(0, dot);
    }

    /** @return whether the client (a process, or one loop {@code PROCESS.N} of it) belongs to that process */
    static boolean ofProcess(String client, String process) {
        return process(client).equals(process);
    }
}
