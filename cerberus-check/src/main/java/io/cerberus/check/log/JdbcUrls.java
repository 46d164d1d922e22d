package io.cerberus.check.log;

/** The driver URLs the checker opens its own connections with, next to the jdbc: engine's. */
public final class JdbcUrls {
    private JdbcUrls() {}

    /** @return the URL without the {@code cerberus.*} parameters the jdbc: engine reads (the driver refuses some) */
    public static String withoutCerberusParameters(String url) {
        return url.replaceAll("([?&;])cerberus\\.[^&;]*[&;]?", "$1").replaceAll("[?&;]$", "");
    }

    /** @return the URL with the driver's connect and socket timeouts of 5 s, unless it sets them */
    public static String withTimeouts(String url) {
        if (url.contains("Timeout=")) {
            return url;
        }
        String separator = url.contains("?") ? "&" : "?";
        if (url.startsWith("jdbc:postgresql:")) {
            return url + separator + "connectTimeout=5&socketTimeout=5";
        }
        if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
            return url + separator + "connectTimeout=5000&socketTimeout=5000";
        }
        return url;
    }
}
