package io.cerberus.etcd;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.Redaction;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLException;

/**
 * Opens {@code etcd://} and {@code etcds://} engines on jetcd. See {@link EtcdTarget} for the URI
 * and {@link EtcdEngine} for the recipe.
 */
public final class EtcdEngineProvider implements EngineProvider {

    /** Needed by {@link java.util.ServiceLoader}. */
    public EtcdEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("etcd", "etcds");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return EtcdEngine.CAPABILITIES;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return EtcdTarget.PARAMETERS;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        EtcdTarget target = EtcdTarget.parse(context.uri(), context.defaultLease());
        String describe = Redaction.redact(context.uri());
        if (!target.tls() && target.password().isPresent()) {
            Redaction.warnIfCredentialsInPlaintext(
                    "etcd",
                    context.uri(),
                    target.endpoints().stream()
                            .map(endpoint -> java.net.URI.create(endpoint).getHost())
                            .toList());
        }
        refuseIfNoMemberListens(target.endpoints(), describe, context.connectTimeout());
        DeleteCopyCounter deleteCopyCounter = new DeleteCopyCounter();
        ClientBuilder builder = Client.builder()
                .endpoints(target.endpoints().toArray(String[]::new))
                .connectTimeout(context.connectTimeout())
                .retryMaxDuration(context.connectTimeout())
                .executorService(new CallerRuns())
                .interceptor(deleteCopyCounter)
                // one member at a time, the next one when it fails (jetcd 0.8 spreads calls round robin
                // by default): a resend goes to whichever member the client talks to now (EtcdRequests)
                .loadBalancerPolicy("pick_first");
        target.user().ifPresent(user -> builder.user(LockKeys.bytes(user)));
        target.password().ifPresent(password -> builder.password(LockKeys.bytes(password)));
        if (target.tls()) {
            try {
                builder.sslContext(ssl -> target.trustedCertificates().ifPresent(ca -> ssl.trustManager(ca.toFile())));
            } catch (SSLException e) {
                throw new IllegalArgumentException("cannot set up TLS for etcd " + describe + ": " + e.getMessage(), e);
            }
        }
        Client client = builder.build();
        EtcdEngine engine = new EtcdEngine(
                describe, client, deleteCopyCounter, target, context.connectTimeout(), context.lossReporter());
        try {
            engine.start();
        } catch (RuntimeException e) {
            engine.close();
            if (e instanceof EngineUnavailableException) {
                throw e;
            }
            throw new EngineUnavailableException("could not open etcd " + describe + ": " + e, e);
        }
        KeyNameExposure.checkInBackground(
                client.getMaintenanceClient(),
                target.endpoints(),
                target.user().isPresent(),
                describe,
                context.connectTimeout());
        return engine;
    }

    /**
     * Fails at once when no member of the URI accepts a connection — refused, or its host unknown —
     * as a Redis client does: gRPC would try again until the connect timeout and then report only
     * that nothing answered. A member that does not answer the connect at all (a dropped packet) is
     * left to the client, which waits for it up to the connect timeout.
     */
    private static void refuseIfNoMemberListens(List<String> endpoints, String describe, Duration connectTimeout) {
        int probeMillis = (int) Math.max(1, Math.min(connectTimeout.toMillis(), 1000));
        List<String> refusals = new ArrayList<>();
        for (String endpoint : endpoints) {
            java.net.URI address = java.net.URI.create(endpoint);
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(address.getHost(), address.getPort()), probeMillis);
                return;
            } catch (ConnectException | UnknownHostException e) {
                refusals.add(address.getHost() + ":" + address.getPort() + ": "
                        + (e instanceof UnknownHostException ? "unknown host" : e.getMessage()));
            } catch (IOException e) {
                return; // no answer (a timeout): not known to be down, the client waits for it within the timeout
            }
        }
        throw new EngineUnavailableException(
                "etcd " + describe + ": no member accepts connections (" + String.join("; ", refusals)
                        + "); check that etcd runs and that the URI's hosts and ports are its client URLs",
                null);
    }
}
