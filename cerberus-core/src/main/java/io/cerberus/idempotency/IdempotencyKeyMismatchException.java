package io.cerberus.idempotency;

import io.cerberus.CerberusException;

/** The same idempotency key came with another payload: a reused key is a client bug, so nothing runs. */
public class IdempotencyKeyMismatchException extends CerberusException {
    private static final long serialVersionUID = 1L;

    public IdempotencyKeyMismatchException(String message) {
        super(message, null);
    }
}
