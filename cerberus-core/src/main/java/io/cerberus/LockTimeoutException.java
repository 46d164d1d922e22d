package io.cerberus;

import java.time.Duration;

/**
 * {@link DistributedLock#acquire(Duration)} waited its whole wait time and the lock stayed busy.
 * Use {@link DistributedLock#tryAcquire(Duration)} where contention is an expected outcome.
 */
public class LockTimeoutException extends CerberusException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock, how long it waited, which engine
     */
    public LockTimeoutException(String message) {
        super(message);
    }
}
