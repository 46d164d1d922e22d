package io.cerberus.check.report;

import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.judge.SafetyChecker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Writes a safety-checker report as text and as an HTML timeline. */
public final class CheckReport {
    /** The most holds the timeline draws; past it, only those worth a look. */
    private static final int MAX_DRAWN = 20_000;
    private CheckReport() {
    }

    public static String text(String title, SafetyChecker.Report report) {
        StringBuilder out = new StringBuilder();
        out.append(title).append('\n');
        out.append("verdict:               ").append(report.verdict()).append('\n');
        out.append("holds (operations):    ").append(report.holds().size()).append('\n');
        if (report.locks().size() > 1) {
            SafetyChecker.LockReport worst = report.worst();
            out.append("locks:                 ").append(report.locks().size()).append(", each judged on its own; worst: ")
                    .append(worst.name()).append(" (").append(worst.holds().size()).append(" holds, ").append(worst.overlaps().size())
                    .append(" overlapping, ").append(worst.lostUpdates()).append(" lost, ").append(worst.tokensBackwards())
                    .append(" tokens backwards, longest unheld ").append(millis(worst.longestGapNanos())).append(")\n");
        }
        out.append("faults injected:       ").append(FaultInjector.injectedText(report.faultCounts())).append('\n');
        java.util.Map<String, Integer> confirmed = report.confirmations(true);
        java.util.Map<String, Integer> notConfirmed = report.confirmations(false);
        if (!confirmed.isEmpty() || !notConfirmed.isEmpty()) {
            out.append("faults confirmed:      ").append(FaultInjector.confirmedText(confirmed, notConfirmed)).append('\n');
        }
        if (confirmed.containsKey("pause")) {
            out.append("pauses of a holder:    ").append(report.pausesOfHolders()).append(" of ").append(confirmed.get("pause"))
                    .append(" confirmed pauses stopped a client holding a lock\n");
        }
        out.append("overlapping holds:     ").append(report.overlaps().size()).append(" (two clients believed they held the lock at once)\n");
        out.append("stale writes stopped:  ").append(report.staleStopped()).append(" (refused by the fenced register: fencing at work)\n");
        out.append("lost updates:          ").append(report.lostUpdates()).append(" (").append(report.writesAccepted())
                .append(" writes accepted, final value ").append(report.finalValue()).append(")\n");
        out.append("tokens backwards:      ").append(report.tokensBackwards()).append('\n');
        if (report.lateGrants() > 0) {
            out.append("grants reaching late:  ").append(report.lateGrants())
                    .append(" (the client was paused during its acquire; its token was below others' already granted,"
                            + " and fencing refused its writes)\n");
        }
        out.append("longest time unheld:   ").append(millis(report.longestGapNanos())).append('\n');
        for (SafetyChecker.LockReport stuck : report.stuckLocks()) {
            out.append("stuck:                 ").append(stuck.name()).append(": asked for, and granted to nobody, for the last ")
                    .append(millis(stuck.stuckNanos())).append(" of the run\n");
        }
        out.append("recovery after a holder was killed: ").append(recoveries(report.recoveriesNanos())).append('\n');
        int shown = 0;
        for (SafetyChecker.Hold[] pair : report.overlaps()) {
            if (shown++ == 5) {
                out.append("  ... and ").append(report.overlaps().size() - 5).append(" more\n");
                break;
            }
            out.append("  overlap: ").append(describe(pair[0], report)).append(" with ").append(describe(pair[1], report)).append('\n');
        }
        return out.toString();
    }

    private static String describe(SafetyChecker.Hold hold, SafetyChecker.Report report) {
        return hold.client() + on(hold, report) + " token " + hold.token() + " [" + millis(hold.startNanos() - report.startNanos()) + " – "
                + millis(hold.endNanos() - report.startNanos()) + ", " + hold.end() + ", write " + hold.write() + "]";
    }

    /** @return " on NAME" in a run of several locks, else nothing */
    private static String on(SafetyChecker.Hold hold, SafetyChecker.Report report) {
        return report.locks().size() > 1 ? " on " + report.locks().get(hold.lock()).name() : "";
    }

    /** @return each time (one per hold a kill ended: a client killed holding three locks counts three), or past 20 their count and spread */
    private static String recoveries(List<Long> sortedNanos) {
        if (sortedNanos.isEmpty()) {
            return "no holder was killed";
        }
        if (sortedNanos.size() <= 20) {
            return sortedNanos.stream().map(CheckReport::millis).toList().toString();
        }
        int count = sortedNanos.size();
        return count + " holds ended by a kill: min " + millis(sortedNanos.get(0)) + ", median " + millis(sortedNanos.get(count / 2))
                + ", 99th percentile " + millis(sortedNanos.get((int) Math.ceil(count * 0.99) - 1)) + ", max " + millis(sortedNanos.get(count - 1));
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    /** Writes the HTML timeline: one lane per client, holds as bars, faults as marks. */
    public static void html(Path file, String title, SafetyChecker.Report report) {
        List<String> clients = new ArrayList<>();
        report.holds().forEach(h -> {
            if (!clients.contains(h.client())) {
                clients.add(h.client());
            }
        });
        report.faults().forEach(f -> {
            if (!clients.contains(f.client())) {
                clients.add(f.client());
            }
        });
        clients.sort(null);
        double span = Math.max(1, report.endNanos() - report.startNanos());
        int width = 1600;
        int lane = 28;
        int left = 90;
        int height = 40 + lane * clients.size() + 30;
        StringBuilder svg = new StringBuilder();
        svg.append("<svg xmlns='http://www.w3.org/2000/svg' width='").append(width + left + 20).append("' height='").append(height).append("'>\n");
        for (int i = 0; i < clients.size(); i++) {
            int y = 30 + i * lane;
            svg.append("<text x='4' y='").append(y + 17).append("' font-size='13'>").append(escape(clients.get(i))).append("</text>\n");
            svg.append("<line x1='").append(left).append("' x2='").append(left + width).append("' y1='").append(y + 12)
                    .append("' y2='").append(y + 12).append("' stroke='#ddd'/>\n");
        }
        java.util.Set<SafetyChecker.Hold> overlapping = new java.util.HashSet<>();
        report.overlaps().forEach(pair -> {
            overlapping.add(pair[0]);
            overlapping.add(pair[1]);
        });
        List<SafetyChecker.Hold> drawn = report.holds().size() <= MAX_DRAWN ? report.holds() : report.holds().stream()
                .filter(hold -> overlapping.contains(hold) || !hold.write().equals("ok") || !hold.end().equals("released"))
                .limit(MAX_DRAWN).toList();
        for (SafetyChecker.Hold hold : drawn) {
            int y = 30 + clients.indexOf(hold.client()) * lane;
            double x = left + (hold.startNanos() - report.startNanos()) / span * width;
            double w = Math.max(1, (hold.endNanos() - hold.startNanos()) / span * width);
            String color = hold.write().contains("stale") ? "#f0a030" : overlapping.contains(hold) ? "#d03030" : "#40a060";
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='24' fill='%s'><title>%s</title></rect>%n",
                    x, y, w, color, escape(hold.client() + on(hold, report) + " token " + hold.token() + ": " + millis(hold.startNanos() - report.startNanos())
                            + " to " + millis(hold.endNanos() - report.startNanos()) + " (" + hold.end() + ", write " + hold.write() + ")")));
        }
        for (SafetyChecker.Fault fault : report.faults()) {
            int index = clients.indexOf(fault.client());
            double x = left + (fault.nanos() - report.startNanos()) / span * width;
            svg.append(String.format(Locale.ROOT, "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#333' stroke-dasharray='3,2'>"
                    + "<title>%s</title></line>%n", x, x, 24 + index * lane, 58 + index * lane, escape(fault.kind() + " " + fault.client()
                            + " at " + millis(fault.nanos() - report.startNanos()))));
            svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' font-size='10'>%s</text>%n", x + 2, 26 + index * lane,
                    escape(fault.kind().split(" ", 2)[0])));
        }
        svg.append("</svg>\n");
        String page = "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>" + escape(title) + "</title></head>\n"
                + "<body style='font-family:sans-serif'>\n<h1>" + escape(title) + "</h1>\n<pre>" + escape(text(title, report)) + "</pre>\n"
                + (drawn.size() < report.holds().size() ? "<p>" + drawn.size() + " of " + report.holds().size() + " holds drawn: those"
                        + " that overlapped, were refused as stale, lost or killed (a long run has too many to draw).</p>\n" : "")
                + "<p>One lane per client, time left to right (" + millis(report.endNanos() - report.startNanos()) + " in all). Green: a hold"
                + " whose write was accepted; orange: its write was refused as stale (fencing); red: it overlapped another client's"
                + " hold. Dashed marks: faults. Hover for details.</p>\n" + svg + "</body></html>\n";
        try {
            Files.writeString(file, page, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
    }
}
