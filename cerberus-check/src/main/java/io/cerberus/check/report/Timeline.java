package io.cerberus.check.report;

import io.cerberus.check.judge.Hold;
import io.cerberus.check.judge.LockJudgement;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Writes a lock check's HTML timeline: one lane per client, holds as bars, faults as marks (the text report is {@link LockJudgement#text}). */
public final class Timeline {
    /** The most holds the timeline draws; past it, only those worth a look. */
    private static final int MAX_DRAWN = 20_000;

    private Timeline() {}

    public static void html(Path file, String title, LockJudgement report) {
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
        svg.append("<svg xmlns='http://www.w3.org/2000/svg' width='")
                .append(width + left + 20)
                .append("' height='")
                .append(height)
                .append("'>\n");
        for (int i = 0; i < clients.size(); i++) {
            int y = 30 + i * lane;
            svg.append("<text x='4' y='")
                    .append(y + 17)
                    .append("' font-size='13'>")
                    .append(escape(clients.get(i)))
                    .append("</text>\n");
            svg.append("<line x1='")
                    .append(left)
                    .append("' x2='")
                    .append(left + width)
                    .append("' y1='")
                    .append(y + 12)
                    .append("' y2='")
                    .append(y + 12)
                    .append("' stroke='#ddd'/>\n");
        }
        java.util.Set<Hold> overlapping = new java.util.HashSet<>();
        report.overlaps().forEach(pair -> {
            overlapping.add(pair[0]);
            overlapping.add(pair[1]);
        });
        List<Hold> drawn = report.holds().size() <= MAX_DRAWN
                ? report.holds()
                : report.holds().stream()
                        .filter(hold -> overlapping.contains(hold)
                                || !hold.write().equals("ok")
                                || !hold.end().equals("released"))
                        .limit(MAX_DRAWN)
                        .toList();
        for (Hold hold : drawn) {
            int y = 30 + clients.indexOf(hold.client()) * lane;
            double x = left + (hold.startNanos() - report.startNanos()) / span * width;
            double w = Math.max(1, (hold.endNanos() - hold.startNanos()) / span * width);
            String color =
                    hold.write().contains("stale") ? "#f0a030" : overlapping.contains(hold) ? "#d03030" : "#40a060";
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x='%.1f' y='%d' width='%.1f' height='24' fill='%s'><title>%s</title></rect>%n",
                    x,
                    y,
                    w,
                    color,
                    escape(hold.client() + report.on(hold) + " token " + hold.token() + ": "
                            + LockJudgement.millis(hold.startNanos() - report.startNanos()) + " to "
                            + LockJudgement.millis(hold.endNanos() - report.startNanos()) + " (" + hold.end()
                            + ", write " + hold.writeText() + ")")));
        }
        for (LockJudgement.Fault fault : report.faults()) {
            int index = clients.indexOf(fault.client());
            double x = left + (fault.nanos() - report.startNanos()) / span * width;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#333' stroke-dasharray='3,2'>"
                            + "<title>%s</title></line>%n",
                    x,
                    x,
                    24 + index * lane,
                    58 + index * lane,
                    escape(fault.kind() + " " + fault.client() + " at "
                            + LockJudgement.millis(fault.nanos() - report.startNanos()))));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x='%.1f' y='%d' font-size='10'>%s</text>%n",
                    x + 2,
                    26 + index * lane,
                    escape(fault.kind().split(" ", 2)[0])));
        }
        svg.append("</svg>\n");
        String page = "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>" + escape(title) + "</title></head>\n"
                + "<body style='font-family:sans-serif'>\n<h1>" + escape(title) + "</h1>\n<pre>"
                + escape(report.text(title)) + "</pre>\n"
                + (drawn.size() < report.holds().size()
                        ? "<p>" + drawn.size() + " of " + report.holds().size() + " holds drawn: those"
                                + " that overlapped, were refused as stale, lost or killed (a long run has too many to draw).</p>\n"
                        : "")
                + "<p>One lane per client, time left to right ("
                + LockJudgement.millis(report.endNanos() - report.startNanos()) + " in all). Green: a hold"
                + " whose write was accepted; orange: its write was refused as stale (fencing); red: it overlapped another client's"
                + " hold. Dashed marks: faults. Hover for details.</p>\n" + svg + "</body></html>\n";
        try {
            Files.writeString(file, page, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("'", "&#39;");
    }
}
