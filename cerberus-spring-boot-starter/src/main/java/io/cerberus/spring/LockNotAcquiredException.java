package io.cerberus.spring;

import io.cerberus.LockTimeoutException;
import java.time.Duration;

/**
 * A {@link WithDistributedLock @WithDistributedLock} method did not run: its lock stayed busy for the
 * whole wait time. Contention, not a failure: in a web application the starter answers HTTP 409 Conflict ({@code cerberus.web.error-statuses.*}).
 */
public class LockNotAcquiredException extends LockTimeoutException {
    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final Duration waitTime;

    /**
     * @param lockName the lock that was busy
     * @param waitTime how long the call waited for it
     * @param message which lock, which method, how long, which engine
     */
    public LockNotAcquiredException(String lockName, Duration waitTime, String message) {
        super(message);
        this.lockName = lockName;
        this.waitTime = waitTime;
    }

    /** @return the name of the lock that was busy (the evaluated key) */
    public String lockName() {
        return lockName;
    }

    /** @return how long the call waited for the lock */
    public Duration waitTime() {
        return waitTime;
    }
}
