package io.cerberus.etcd;

import io.etcd.jetcd.Maintenance;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Warns when the etcd members run a version that lets any user read other users' key names:
 * before 3.4.26 and 3.5.9, {@code LeaseTimeToLive} with {@code keys=true} lists the keys attached
 * to any lease without checking read permission (CVE-2023-32082), and lease ids are listed to
 * anyone, so another application's user learns this application's lock names and idempotency key
 * ids. Only a client that connects with credentials is told: without them there is no
 * per-application boundary to break.
 *
 * <p>Each member is asked for its version with one status call, in the background: connecting does
 * not wait for it, and a status call refused or unanswered within the timeout is logged at
 * {@code DEBUG} (JUL {@code FINE}) and otherwise ignored.
 */
final class KeyNameExposure {
    private static final System.Logger LOG = System.getLogger(KeyNameExposure.class.getName());
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+).*");
    static final String FIXED_VERSIONS = "3.4.26 or 3.5.9";

    private KeyNameExposure() {}

    /**
     * @param version a member's version, e.g. {@code 3.4.23}
     * @return whether any authenticated user may read the key names attached to another user's
     *     lease on that version; false for a version that cannot be read
     */
    static boolean exposesKeyNames(String version) {
        Matcher parts = VERSION.matcher(version);
        if (!parts.matches()) {
            return false;
        }
        int major = Integer.parseInt(parts.group(1));
        int minor = Integer.parseInt(parts.group(2));
        int patch = Integer.parseInt(parts.group(3));
        if (major != 3) {
            return major < 3;
        }
        return minor < 4 || (minor == 4 && patch < 26) || (minor == 5 && patch < 9);
    }

    /**
     * Asks every member for its version in the background; logs one WARNING if a client with
     * credentials talks to a member that exposes key names, then the versions found at
     * {@code DEBUG}.
     *
     * @param maintenance the client's maintenance API
     * @param endpoints {@code http(s)://host:port} of the members
     * @param withCredentials whether the client authenticates
     * @param describe the engine URI, password redacted
     * @param timeout how long a status call may take
     */
    static void checkInBackground(
            Maintenance maintenance,
            List<String> endpoints,
            boolean withCredentials,
            String describe,
            Duration timeout) {
        Map<String, String> versions = new TreeMap<>();
        List<CompletableFuture<?>> calls = new ArrayList<>();
        for (String endpoint : endpoints) {
            String member = endpoint.substring(endpoint.indexOf("://") + 3);
            CompletableFuture<StatusResponse> status;
            try {
                status = maintenance.statusMember(member);
            } catch (RuntimeException e) {
                status = CompletableFuture.failedFuture(e);
            }
            calls.add(status.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .handle((reply, failure) -> {
                        if (failure != null) {
                            LOG.log(
                                    Level.DEBUG,
                                    "could not read the version of etcd member {0} of {1}: {2}",
                                    member,
                                    describe,
                                    failure.toString());
                        } else {
                            synchronized (versions) {
                                versions.put(member, reply.getVersion());
                            }
                        }
                        return null;
                    }));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture<?>[]::new)).whenComplete((done, failure) -> {
            synchronized (versions) {
                if (withCredentials) {
                    warnIfExposed(versions, describe);
                }
                LOG.log(Level.DEBUG, "etcd {0}: member versions {1}", describe, versions);
            }
        });
    }

    private static void warnIfExposed(Map<String, String> versions, String describe) {
        List<String> exposing = new ArrayList<>();
        versions.forEach((member, version) -> {
            if (exposesKeyNames(version)) {
                exposing.add("member " + member + " runs etcd " + version);
            }
        });
        if (!exposing.isEmpty()) {
            LOG.log(
                    Level.WARNING,
                    describe + ": " + String.join(", ", exposing) + ". On this version any user of"
                            + " the cluster, with or without credentials, can read the key names (lock names, idempotency key ids)"
                            + " attached to this client's leases through LeaseTimeToLive (CVE-2023-32082): etcd roles do not keep"
                            + " them from other applications. Upgrade to etcd " + FIXED_VERSIONS
                            + " or later (see the tenancy part"
                            + " of the etcd engine's docs)");
        }
    }
}
