package io.cerberus.idempotency;

import io.cerberus.CerberusException;

/** Another attempt of the same operation is running now (and the guard was told not to wait, or waited long enough). */
public class OperationInProgressException extends CerberusException {
    private static final long serialVersionUID = 1L;

    public OperationInProgressException(String message) {
        super(message, null);
    }
}
