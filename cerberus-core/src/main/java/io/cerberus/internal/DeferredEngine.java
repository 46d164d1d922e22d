package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.support.Redaction;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A standby engine that could not be reached when the client was built: the client starts
 * anyway, and every call to this engine first tries to open it (within the connect timeout, at
 * most once a second; in between, calls fail at once with the last failure). Health checks keep
 * trying, so a failover finds it once it is up. Until it is open its capabilities are those its
 * scheme declares.
 */
final class DeferredEngine implements LockEngine {
    private static final System.Logger LOG = System.getLogger(DeferredEngine.class.getName());
    private static final long RETRY_NANOS = 1_000_000_000L;

    private final EngineContext context;
    private final String shown;
    private final Set<Capability> declared;
    private volatile LockEngine engine;
    /** Held while opening (a connect, up to the connect timeout) and guards the fields below; not a monitor, so a virtual thread waiting for it frees its carrier. */
    private final ReentrantLock opening = new ReentrantLock();
    /** Why the last opening failed: unreachable, or reachable but set up against a guarantee. */
    private CerberusException lastFailure;

    private long lastAttemptNanos;
    private boolean closed;

    DeferredEngine(EngineContext context, Set<Capability> declared, EngineUnavailableException failure) {
        this.context = context;
        this.shown = Redaction.redact(context.uri());
        this.declared = Set.copyOf(declared);
        this.lastFailure = failure;
        this.lastAttemptNanos = System.nanoTime();
    }

    /** @return the open engine, opening it now if it can */
    private LockEngine open() {
        LockEngine open = engine;
        if (open != null) {
            return open;
        }
        opening.lock();
        try {
            if (engine != null) {
                return engine;
            }
            if (closed) {
                throw new IllegalStateException("the engine " + shown + " is closed");
            }
            if (System.nanoTime() - lastAttemptNanos < RETRY_NANOS) {
                if (lastFailure instanceof UnsafeEngineException unsafe) {
                    throw new UnsafeEngineException(unsafe.getMessage());
                }
                throw new EngineUnavailableException(
                        "engine " + shown + " could not be reached (it was down when the client started,"
                                + " tried again at most once a second): " + lastFailure.getMessage(),
                        lastFailure);
            }
            lastAttemptNanos = System.nanoTime();
            try {
                engine = EngineRegistry.open(context);
                LOG.log(Level.INFO, "engine " + shown + " is reachable now and open");
                return engine;
            } catch (EngineUnavailableException | UnsafeEngineException e) {
                lastFailure = e;
                throw e;
            }
        } finally {
            opening.unlock();
        }
    }

    /** @return whether the engine has been opened */
    boolean isOpen() {
        return engine != null;
    }

    @Override
    public String describe() {
        LockEngine open = engine;
        return open != null ? open.describe() : shown;
    }

    @Override
    public Set<Capability> capabilities() {
        LockEngine open = engine;
        return open != null ? open.capabilities() : declared;
    }

    @Override
    public Duration validity(Duration lease) {
        return open().validity(lease);
    }

    @Override
    public Optional<Duration> silentHolderExpiry(Duration lease) {
        return open().silentHolderExpiry(lease);
    }

    @Override
    public Optional<String> whyNot(Capability capability) {
        LockEngine open = engine;
        return open != null ? open.whyNot(capability) : Optional.empty();
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        return open().tryAcquire(attempt);
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        open().awaitChange(attempt, max);
    }

    @Override
    public void abandon(Acquisition attempt) {
        LockEngine open = engine;
        if (open != null) {
            open.abandon(attempt);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        return open().renew(attempt);
    }

    @Override
    public boolean release(Acquisition attempt) {
        return open().release(attempt);
    }

    @Override
    public boolean isLocked(LockKey key) {
        return open().isLocked(key);
    }

    @Override
    public List<String> checkHealth(LockKey probe) {
        return open().checkHealth(probe);
    }

    /** The engine's abilities are those of the engine it opens. */
    @Override
    public <A> Optional<A> ability(Class<A> ability) {
        return open().ability(ability);
    }

    @Override
    public void close() {
        LockEngine open;
        opening.lock();
        try {
            closed = true;
            open = engine;
        } finally {
            opening.unlock();
        }
        if (open != null) {
            open.close();
        }
    }
}
