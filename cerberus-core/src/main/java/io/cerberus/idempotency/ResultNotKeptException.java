package io.cerberus.idempotency;

/**
 * The first attempt ran, but its result could not be kept (larger than the store keeps in a
 * record, or refused by the codec): a duplicate is told so instead of running the operation again.
 * Retrying with the same key gives the same answer until the retention ends.
 */
public class ResultNotKeptException extends ReplayedFailureException {
    private static final long serialVersionUID = 1L;

    public ResultNotKeptException(String message) {
        super(message);
    }
}
