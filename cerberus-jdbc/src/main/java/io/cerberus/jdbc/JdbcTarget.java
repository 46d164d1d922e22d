package io.cerberus.jdbc;

import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code jdbc:} engine URI: the driver's own URL with our settings mixed in as
 * {@code cerberus.*} parameters, which are taken out before the URL goes to the driver.
 *
 * <pre>
 * jdbc:postgresql://127.0.0.1:5432/app?user=app&amp;password=...&amp;cerberus.mode=session
 * jdbc:mariadb://127.0.0.1:3306/app?user=app&amp;cerberus.table=app_locks
 * jdbc:h2:tcp://127.0.0.1:9092/mem:app;cerberus.createTable=false
 * </pre>
 *
 * @param driverUrl the URL for the driver, without our parameters
 * @param describe the URI without passwords, for messages
 * @param table the lock table
 * @param mode lease-row or session
 * @param createTable whether a missing table is created
 * @param sessionCheckInterval how often session-mode connections are checked
 * @param poolSize the most connections of the built-in pool (when no data source is given)
 */
record JdbcTarget(
        String driverUrl,
        String describe,
        String table,
        JdbcOptions.Mode mode,
        boolean createTable,
        Duration sessionCheckInterval,
        int poolSize) {
    static final String DEFAULT_TABLE = "cerberus_locks";
    private static final Pattern OURS = Pattern.compile("([?&;])cerberus\\.([A-Za-z]+)=([^&;#]*)");
    private static final Pattern TABLE =
            Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final Set<String> KNOWN = Set.of("table", "mode", "createTable", "sessionCheckMs", "poolSize");
    /**
     * The parameters shown with their values in messages: ours, and the drivers' common ones that
     * never carry a secret. Any other driver parameter's value is hidden.
     */
    static final Set<String> PLAIN_PARAMETERS = Set.of(
            "cerberus.table",
            "cerberus.mode",
            "cerberus.createTable",
            "cerberus.sessionCheckMs",
            "cerberus.poolSize",
            "user",
            "sslmode",
            "ssl",
            "currentSchema",
            "ApplicationName",
            "connectTimeout",
            "socketTimeout",
            "loginTimeout",
            "tcpKeepAlive",
            "targetServerType",
            "loadBalanceHosts",
            "prepareThreshold",
            "useSSL",
            "sslMode",
            "serverTimezone",
            "characterEncoding",
            "databaseName",
            "encrypt",
            "MODE",
            "DB_CLOSE_DELAY",
            "DB_CLOSE_ON_EXIT",
            "IFEXISTS",
            "LOCK_TIMEOUT");

    static JdbcTarget parse(String uri, JdbcOptions options) {
        String describe = Redaction.redact(uri);
        if (!uri.regionMatches(true, 0, "jdbc:", 0, 5) || uri.length() <= 5) {
            throw new IllegalArgumentException(
                    "a jdbc engine URI is a JDBC URL such as jdbc:postgresql://host:5432/db, was " + describe);
        }
        Map<String, String> ours = new LinkedHashMap<>();
        StringBuilder url = new StringBuilder();
        Matcher matcher = OURS.matcher(uri);
        int last = 0;
        boolean queryOpened = false;
        while (matcher.find()) {
            String key = matcher.group(2);
            if (!KNOWN.contains(key)) {
                throw new IllegalArgumentException("unknown setting cerberus." + key + " in " + describe
                        + " (settings: cerberus."
                        + String.join(", cerberus.", KNOWN.stream().sorted().toList()) + ")");
            }
            if (ours.put(key, matcher.group(3)) != null) {
                throw new IllegalArgumentException("cerberus." + key + " is given twice in " + describe);
            }
            url.append(uri, last, matcher.start());
            // a removed "?x=y" leaves the next "&a=b" to open the query
            queryOpened |= matcher.group(1).equals("?");
            last = matcher.end();
        }
        url.append(uri.substring(last));
        String driverUrl = url.toString();
        if (queryOpened && driverUrl.indexOf('?') < 0 && driverUrl.indexOf('&') >= 0) {
            driverUrl = driverUrl.replaceFirst("&", "?");
        }
        String table = options.table().orElseGet(() -> checkTable(ours.getOrDefault("table", DEFAULT_TABLE)));
        JdbcOptions.Mode mode =
                options.mode().orElseGet(() -> parseMode(ours.getOrDefault("mode", "lease-row"), describe));
        boolean createTable = options.createTable()
                .orElseGet(() -> parseBoolean("createTable", ours.getOrDefault("createTable", "true"), describe));
        Duration check = options.sessionCheckInterval()
                .orElseGet(() -> checkInterval(Duration.ofMillis(
                        parseLong("sessionCheckMs", ours.getOrDefault("sessionCheckMs", "2000"), describe))));
        long poolSize = parseLong("poolSize", ours.getOrDefault("poolSize", "8"), describe);
        if (poolSize < 1 || poolSize > 1000) {
            throw new IllegalArgumentException(
                    "cerberus.poolSize must be 1 to 1000, was " + poolSize + " in " + describe);
        }
        return new JdbcTarget(driverUrl, describe, table, mode, createTable, check, (int) poolSize);
    }

    static String checkTable(String table) {
        if (table == null || !TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException(
                    "table name must be letters, digits and underscores (optionally schema.table),"
                            + " starting with a letter or underscore, at most 63 characters a part; was '" + table
                            + "'");
        }
        return table;
    }

    static Duration checkInterval(Duration interval) {
        if (interval == null || interval.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("session check interval must be at least 100ms, was " + interval);
        }
        return interval;
    }

    private static JdbcOptions.Mode parseMode(String value, String describe) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "lease-row":
            case "lease_row":
            case "leaserow":
                return JdbcOptions.Mode.LEASE_ROW;
            case "session":
                return JdbcOptions.Mode.SESSION;
            default:
                throw new IllegalArgumentException(
                        "cerberus.mode must be lease-row or session, was '" + value + "' in " + describe);
        }
    }

    private static boolean parseBoolean(String key, String value, String describe) {
        if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(value);
        }
        throw new IllegalArgumentException(
                "cerberus." + key + " must be true or false, was '" + value + "' in " + describe);
    }

    private static long parseLong(String key, String value, String describe) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "cerberus." + key + " must be a whole number, was '" + value + "' in " + describe, e);
        }
    }

    /** @return the target with its URL {@linkplain Redaction#redact redacted} */
    @Override
    public String toString() {
        return "JdbcTarget[" + describe + ", table=" + table + ", mode=" + mode + ", createTable=" + createTable
                + ", sessionCheckInterval=" + sessionCheckInterval + ", poolSize=" + poolSize + "]";
    }
}
