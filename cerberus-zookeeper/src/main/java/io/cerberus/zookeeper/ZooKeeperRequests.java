package io.cerberus.zookeeper;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.support.Durations;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * Sends the engine's requests to the ensemble, each bounded by the connect timeout, and turns
 * failures into {@link EngineUnavailableException} naming the URI. Shared by the locks and the
 * idempotency records. Thread-safe.
 *
 * <p>Two ways to send. {@link #send} goes through Curator's background path: ZooKeeper's I/O
 * thread hands the answer to its event thread, which hands it to the caller; the wait is ours,
 * bounded and deaf to interrupts. {@link #direct} uses ZooKeeper's synchronous API: the I/O thread
 * wakes the caller itself, one thread hand-off less per request, which on a small machine is most
 * of a request's client cost. It is used only where ZooKeeper bounds the wait itself within the
 * timeout (its request timeout, {@link ZKClientConfig#ZOOKEEPER_REQUEST_TIMEOUT}, which the
 * engine's own client gets; on a timeout ZooKeeper also drops the connection and reconnects), and
 * only on platform threads: ZooKeeper waits in a monitor, which would pin a virtual thread to its
 * carrier. Its callers handle an answer that never came (interrupt, connection loss) by asking the
 * background way, which can tell what happened: requests of a session are answered in order.
 *
 * <p>A request waits for its answer at most the timeout. A step of an acquisition
 * ({@link #sendAcquiring}) also gives up once the client has had no connection for the session
 * timeout: by then the ensemble has ended the session the request belongs to (a dead server, a
 * client cut off), so waiting longer only keeps the caller from going elsewhere — to the engine a
 * failover switched to, say. A release or a renewal waits on, to learn what became of the hold.
 */
final class ZooKeeperRequests {
    /** {@code Thread.isVirtual()} where the platform has it (Java 21), else null. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private final String shown;
    /** How long one request may take. */
    private final Duration timeout;
    /** The client that {@link #direct} requests go through; null when they may not (see the class comment). */
    private final CuratorFramework directClient;

    private final CuratorFramework client;
    /** The session timeout the ensemble last granted, in nanoseconds; 0 until one is known. */
    private volatile long grantedSessionNanos;
    /** How often a waiting step of an acquisition looks whether the client is still connected. */
    private static final long CONNECTION_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Starts a request in the background. */
    @FunctionalInterface
    interface Request {
        void start(BackgroundCallback callback) throws Exception;
    }

    /** A request sent with ZooKeeper's synchronous API. */
    @FunctionalInterface
    interface DirectRequest<T> {
        T call(ZooKeeper zooKeeper) throws KeeperException, InterruptedException;
    }

    /**
     * @param client the client the requests go through; {@link #direct} is used only when ZooKeeper
     *     bounds its synchronous requests within {@code timeout} and Curator adds no namespace
     */
    ZooKeeperRequests(String shown, Duration timeout, CuratorFramework client) {
        this.shown = shown;
        this.timeout = timeout;
        this.client = client;
        this.directClient = boundsRequestsWithin(client, timeout) ? client : null;
    }

    /** Sets the session timeout the ensemble granted (the engine reads it when a session is established). */
    void grantedSession(Duration granted) {
        grantedSessionNanos = granted.toNanos();
    }

    /** @return the session timeout the ensemble last granted; zero until one is known */
    Duration grantedSession() {
        return Duration.ofNanos(grantedSessionNanos);
    }

    /**
     * @return whether ZooKeeper's own request timeout ends a synchronous request of this client
     *     within {@code timeout}, and its paths are the engine's (no Curator namespace)
     */
    private static boolean boundsRequestsWithin(CuratorFramework client, Duration timeout) {
        if (client.getNamespace() != null && !client.getNamespace().isEmpty()) {
            return false;
        }
        try {
            long requestTimeout = client.getZookeeperClient()
                    .getZooKeeper()
                    .getClientConfig()
                    .getLong(
                            ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT_DEFAULT);
            return requestTimeout > 0 && requestTimeout <= timeout.toMillis();
        } catch (Exception e) {
            return false; // no handle now: the background way, which waits for one
        }
    }

    /**
     * @return whether {@link #direct} may be used now: this client allows it, it is connected, and
     *     the caller is not a virtual thread
     */
    boolean canSendDirect() {
        return directClient != null && directClient.getZookeeperClient().isConnected() && !onVirtualThread();
    }

    /**
     * Sends a request with ZooKeeper's synchronous API and waits for its answer on this thread
     * (use only when {@link #canSendDirect()}). An interrupt already pending is kept for the caller
     * and does not cut the wait short; one that comes during the wait is kept too, but the answer is
     * then not awaited.
     *
     * @return the answer; null when there is none: the caller was interrupted or the connection was
     *     lost before it came, so the request may or may not have been carried out
     * @throws KeeperException when the ensemble refused the request, or the session had expired (the
     *     request was then not carried out); not for a connection loss
     * @throws EngineUnavailableException when no answer came within the timeout (ZooKeeper then
     *     drops the connection)
     */
    <T> T direct(Supplier<String> what, DirectRequest<T> request) throws KeeperException {
        ZooKeeper zooKeeper;
        try {
            zooKeeper = directClient.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return null; // nothing was sent; the background way waits for a connection
        }
        boolean interrupted = Thread.interrupted();
        try {
            return request.call(zooKeeper);
        } catch (InterruptedException e) {
            interrupted = true;
            return null;
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionMovedException e) {
            return null;
        } catch (KeeperException.RequestTimeoutException e) {
            throw unanswered(what.get(), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the id of the client's session, 0 when it has none now */
    long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    private static boolean onVirtualThread() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            return true; // cannot tell: the background way is right on any thread
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup()
                    .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null; // before Java 21 every thread is a platform thread
        }
    }

    /** @return the engine's URI without its password */
    String shown() {
        return shown;
    }

    /**
     * Sends a request and waits for its answer, at most the engine's timeout, without being
     * interrupted: a request cut off half way could leave a node whose owner does not know it.
     * An interrupt is kept for the caller.
     */
    CuratorEvent send(String what, Request request) {
        return send(() -> what, request);
    }

    /** As {@link #send(String, Request)}; {@code what} is said only in an error, so it is made only then. */
    CuratorEvent send(Supplier<String> what, Request request) {
        return send(what, request, false, null);
    }

    /**
     * Sends a step of an acquisition: as {@link #send(Supplier, Request)}, but gives up once the
     * client has had no connection for the session timeout. Curator keeps a request sent without a
     * connection and sends it when one is back, so a request given up may still be carried out:
     * {@code onLateAnswer} gets that late answer, to undo its effect.
     *
     * @param onLateAnswer told of an answer that comes after this method threw; null for none
     */
    CuratorEvent sendAcquiring(
            Supplier<String> what, Request request, java.util.function.Consumer<CuratorEvent> onLateAnswer) {
        return send(what, request, true, onLateAnswer);
    }

    private CuratorEvent send(
            Supplier<String> what,
            Request request,
            boolean giveUpWhenDisconnected,
            java.util.function.Consumer<CuratorEvent> onLateAnswer) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            request.start((c, event) -> answer.complete(event));
        } catch (Exception e) {
            throw failure(what.get(), e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        // only a step of an acquisition wakes up to look at the connection; no longer than the session without one
        long granted = grantedSessionNanos;
        long disconnectedBound = granted > 0 ? Math.min(timeout.toNanos(), granted) : timeout.toNanos();
        long slice = giveUpWhenDisconnected ? CONNECTION_CHECK_NANOS : Long.MAX_VALUE;
        long disconnectedSince = 0;
        boolean interrupted = false;
        boolean answered = false;
        try {
            while (true) {
                long now = System.nanoTime();
                try {
                    CuratorEvent event = answer.get(Math.max(0, Math.min(deadline - now, slice)), TimeUnit.NANOSECONDS);
                    answered = true;
                    return event;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    now = System.nanoTime();
                    if (deadline - now <= 0) {
                        throw unanswered(what.get(), e);
                    }
                    if (!giveUpWhenDisconnected || client.getZookeeperClient().isConnected()) {
                        disconnectedSince = 0;
                    } else if (disconnectedSince == 0) {
                        disconnectedSince = now;
                    } else if (now - disconnectedSince >= disconnectedBound) {
                        throw new EngineUnavailableException(
                                "zookeeper engine " + shown + " has had no connection for the session timeout of "
                                        + Durations.format(Duration.ofNanos(disconnectedBound)) + " while waiting to "
                                        + what.get()
                                        + "; check that a quorum of the ensemble runs and is reachable",
                                e);
                    }
                } catch (ExecutionException e) {
                    answered = true;
                    throw failure(what.get(), e);
                }
            }
        } finally {
            if (!answered && onLateAnswer != null) {
                answer.thenAccept(onLateAnswer);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Throws unless the request succeeded. */
    void check(CuratorEvent event, String what) {
        check(event, () -> what);
    }

    /** As {@link #check(CuratorEvent, String)}, making {@code what} only for the error. */
    void check(CuratorEvent event, Supplier<String> what) {
        int code = event.getResultCode();
        if (code != KeeperException.Code.OK.intValue()) {
            throw failure(what.get(), KeeperException.create(KeeperException.Code.get(code), event.getPath()));
        }
    }

    /** @return whether the request failed with this code */
    static boolean failedWith(CuratorEvent event, KeeperException.Code code) {
        return event.getResultCode() == code.intValue();
    }

    private EngineUnavailableException unanswered(String what, Exception e) {
        return new EngineUnavailableException(
                "zookeeper engine " + shown + " did not answer within " + Durations.format(timeout) + " to " + what
                        + "; check that a quorum of the ensemble runs and is reachable",
                e);
    }

    RuntimeException failure(String what, Throwable e) {
        if (e instanceof RuntimeException runtime && !(e instanceof IllegalStateException)) {
            return runtime;
        }
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (e instanceof KeeperException.NoAuthException) {
            return new EngineUnavailableException(
                    "zookeeper engine " + shown + " refused to " + what
                            + ": not authorised (check the user and password of the URI, and the ACL of the namespace's node)",
                    e);
        }
        return new EngineUnavailableException(
                "zookeeper engine " + shown + " could not " + what + ": " + e
                        + "; check that a quorum of the ensemble runs and is reachable",
                e);
    }
}
