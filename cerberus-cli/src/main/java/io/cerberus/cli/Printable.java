package io.cerberus.cli;

/**
 * Text from an engine (lock names and holder strings, which any client of the namespace writes)
 * made safe to print on a terminal: every control character, and every character that reorders
 * or hides text (bidirectional overrides and isolates, line and paragraph separators), is shown
 * as a {@code \}{@code uXXXX} escape, and a backslash as two, so that nothing a client wrote can
 * move the cursor, rewrite earlier lines, set the window title or disguise itself as another name.
 */
final class Printable {
    private Printable() {}

    /**
     * @param text what an engine returned
     * @return the text with each such character escaped; the same string when it has none
     */
    static String escape(String text) {
        if (text.chars().noneMatch(c -> c == '\\' || unsafe(c))) {
            return text;
        }
        StringBuilder shown = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                shown.append("\\\\");
            } else if (unsafe(c)) {
                shown.append(String.format("\\u%04x", (int) c));
            } else {
                shown.append(c);
            }
        }
        return shown.toString();
    }

    private static boolean unsafe(int c) {
        return Character.isISOControl(c)
                || c == '\u2028'
                || c == '\u2029'
                || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069')
                || c == '\u200e'
                || c == '\u200f'
                || c == '\u061c';
    }
}
