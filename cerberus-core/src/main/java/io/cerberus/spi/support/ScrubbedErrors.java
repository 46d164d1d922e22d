package io.cerberus.spi.support;

import io.cerberus.EngineUnavailableException;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Exceptions made safe to show when a client library echoes an engine URI's secrets in its
 * messages (a JDBC driver naming the "host" it parsed out of {@code user:password@host}).
 *
 * <p>A secret is shown where it stands as a whole word of a message (no letter or digit next to
 * it). Invariants: an exception whose chain shows none of the URI's {@link Redaction#secrets} is returned
 * as it is, type and all; otherwise the copy has the same messages with each secret replaced by
 * {@code ****}, the same stack traces, causes and suppressed exceptions, and reads the same when
 * printed. The top keeps its type when it is one Cerberus throws at connect
 * ({@link EngineUnavailableException}, {@link IllegalArgumentException}); a cause keeps its type
 * name in what is printed, not its class.
 */
public final class ScrubbedErrors {
    private ScrubbedErrors() {}

    /**
     * @param error what an engine threw while using {@code uri}
     * @param uri the engine URI
     * @return {@code error}, or a copy that shows none of the URI's secrets
     */
    public static RuntimeException scrub(RuntimeException error, String uri) {
        List<String> secrets = Redaction.secrets(uri);
        if (!shows(error, secrets, new IdentityHashMap<>())) {
            return error;
        }
        Map<Throwable, Throwable> copies = new IdentityHashMap<>();
        String message = hide(error.getMessage(), secrets);
        Throwable cause = error.getCause() == null ? null : copy(error.getCause(), secrets, copies);
        RuntimeException top;
        if (error.getClass() == EngineUnavailableException.class) {
            top = new EngineUnavailableException(message, cause);
        } else if (error.getClass() == IllegalArgumentException.class) {
            top = new IllegalArgumentException(message, cause);
        } else {
            return (RuntimeException) copy(error, secrets, copies);
        }
        top.setStackTrace(error.getStackTrace());
        for (Throwable suppressed : error.getSuppressed()) {
            top.addSuppressed(copy(suppressed, secrets, copies));
        }
        return top;
    }

    /**
     * @param error a client library's exception that may echo the URI
     * @param uri the engine URI
     * @return {@code error}, or a copy of it (as a {@link RuntimeException} showing the original
     *     type's name) that shows none of the URI's secrets
     */
    public static Throwable scrubAny(Throwable error, String uri) {
        List<String> secrets = Redaction.secrets(uri);
        return shows(error, secrets, new IdentityHashMap<>()) ? copy(error, secrets, new IdentityHashMap<>()) : error;
    }

    private static boolean shows(Throwable error, List<String> secrets, Map<Throwable, Boolean> seen) {
        if (error == null || secrets.isEmpty() || seen.put(error, Boolean.TRUE) != null) {
            return false;
        }
        String message = error.getMessage();
        if (message != null && secrets.stream().anyMatch(secret -> tokenAt(message, secret, 0) >= 0)) {
            return true;
        }
        for (Throwable suppressed : error.getSuppressed()) {
            if (shows(suppressed, secrets, seen)) {
                return true;
            }
        }
        return shows(error.getCause(), secrets, seen);
    }

    private static Throwable copy(Throwable error, List<String> secrets, Map<Throwable, Throwable> copies) {
        Throwable done = copies.get(error);
        if (done != null) {
            return done;
        }
        Shown copy = new Shown(error.getClass().getName(), hide(error.getMessage(), secrets));
        copies.put(error, copy);
        copy.setStackTrace(error.getStackTrace());
        if (error.getCause() != null) {
            copy.initCause(copy(error.getCause(), secrets, copies));
        }
        for (Throwable suppressed : error.getSuppressed()) {
            copy.addSuppressed(copy(suppressed, secrets, copies));
        }
        return copy;
    }

    private static String hide(String message, List<String> secrets) {
        if (message == null) {
            return null;
        }
        String hidden = message;
        for (String secret : secrets) {
            StringBuilder shown = new StringBuilder();
            int from = 0;
            for (int at = tokenAt(hidden, secret, 0); at >= 0; at = tokenAt(hidden, secret, from)) {
                shown.append(hidden, from, at).append("****");
                from = at + secret.length();
            }
            hidden = shown.append(hidden.substring(from)).toString();
        }
        return hidden;
    }

    /**
     * @return where {@code secret} next stands in {@code text} as a whole (no letter or digit
     *     just before or after it, as a client library echoes a URI's part), or -1; so hiding a
     *     value {@code frag} leaves the word "fragment" whole
     */
    private static int tokenAt(String text, String secret, int from) {
        for (int at = text.indexOf(secret, from); at >= 0; at = text.indexOf(secret, at + 1)) {
            int after = at + secret.length();
            if ((at == 0 || !Character.isLetterOrDigit(text.charAt(at - 1)))
                    && (after == text.length() || !Character.isLetterOrDigit(text.charAt(after)))) {
                return at;
            }
        }
        return -1;
    }

    /** A copy of another exception, printed under that exception's type name. */
    private static final class Shown extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String type;

        Shown(String type, String message) {
            super(message);
            this.type = type;
        }

        @Override
        public String toString() {
            String message = getLocalizedMessage();
            return message == null ? type : type + ": " + message;
        }
    }
}
