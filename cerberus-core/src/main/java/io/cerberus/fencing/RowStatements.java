package io.cerberus.fencing;

import java.util.regex.Pattern;

/**
 * The SQL text of {@link FencedRows}, built from names checked as plain SQL identifiers (letters,
 * digits and underscores, not starting with a digit, at most 63 characters: PostgreSQL's limit), so
 * that nothing but those names and the caller's own clauses reaches the text; every value is a bind
 * parameter. The fence condition takes the parameters epoch, epoch, token in that order.
 *
 * @param table the table, optionally {@code schema.table}
 * @param key the key column, unique in the table
 * @param epoch the column of the fence's epoch
 * @param token the column of the fence's token
 */
record RowStatements(String table, String key, String epoch, String token) {
    private static final String IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]{0,62}";
    private static final Pattern COLUMN = Pattern.compile(IDENTIFIER);
    private static final Pattern TABLE = Pattern.compile("(" + IDENTIFIER + "\\.)?" + IDENTIFIER);

    /** Checks the names. */
    RowStatements {
        check(TABLE, table, "table name", " (optionally schema.table)");
        check(COLUMN, key, "key column", "");
        check(COLUMN, epoch, "fence epoch column", "");
        check(COLUMN, token, "fence token column", "");
        if (epoch.equalsIgnoreCase(token) || key.equalsIgnoreCase(epoch) || key.equalsIgnoreCase(token)) {
            throw new IllegalArgumentException("the key column and the two fence columns must be three different"
                    + " columns, were " + key + ", " + epoch + " and " + token);
        }
    }

    private static void check(Pattern rule, String name, String what, String form) {
        if (name == null || !rule.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be a plain SQL identifier" + form
                    + ": letters, digits and underscores, not starting with a digit, at most 63 characters, was "
                    + (name == null ? "null" : "'" + shorten(name) + "'"));
        }
    }

    /** The fence condition: the row has seen no newer fence than the one given. */
    private String notNewer() {
        return "(" + epoch + " < ? OR (" + epoch + " = ? AND " + token + " <= ?))";
    }

    /** Parameters: the set clause's, then epoch, token, key, and the fence condition's. */
    String update(String set) {
        return "UPDATE " + table + " SET " + set + ", " + fenceAssignedWhereNotNewer();
    }

    /** Parameters: epoch, token, key, and the fence condition's. */
    String advance() {
        return "UPDATE " + table + " SET " + fenceAssignedWhereNotNewer();
    }

    private String fenceAssignedWhereNotNewer() {
        return epoch + " = ?, " + token + " = ? WHERE " + key + " = ? AND " + notNewer();
    }

    String advanceReturning(String columns) {
        return advance() + " RETURNING " + columns;
    }

    String select(String columns) {
        return "SELECT " + columns + " FROM " + table + " WHERE " + key + " = ?";
    }

    String insert(String columns, int values) {
        String named = columns.isBlank() ? "" : columns + ", ";
        return "INSERT INTO " + table + " (" + key + ", " + named + epoch + ", " + token + ") VALUES (?"
                + ", ?".repeat(values + 2) + ")";
    }

    String delete() {
        return "DELETE FROM " + table + " WHERE " + key + " = ? AND " + notNewer();
    }

    String fence() {
        return select(epoch + ", " + token);
    }

    /** @return the row named in messages: {@code accounts id='acc-1'} */
    String row(Object keyValue) {
        return table + " " + key + "='" + shorten(String.valueOf(keyValue)) + "'";
    }

    private static String shorten(String text) {
        return text.length() > 60 ? text.substring(0, 60) + "…" : text;
    }
}
