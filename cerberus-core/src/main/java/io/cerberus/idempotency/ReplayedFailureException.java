package io.cerberus.idempotency;

import io.cerberus.CerberusException;

/** The first attempt failed with an exception the guard was told to remember; this is its replay. */
public class ReplayedFailureException extends CerberusException {
    private static final long serialVersionUID = 1L;

    public ReplayedFailureException(String message) {
        super(message, null);
    }
}
