package io.cerberus.etcd;

import io.cerberus.EngineUnavailableException;
import io.grpc.Status;

/**
 * etcd answered a request with an error a resend cannot mend: authentication failed, permission
 * denied, or the lease named no longer exists ({@link #isLeaseGone()}).
 */
final class EtcdRefusedException extends EngineUnavailableException {
    private static final long serialVersionUID = 1L;
    private final boolean leaseGone;

    private EtcdRefusedException(String message, Throwable cause, boolean leaseGone) {
        super(message, cause);
        this.leaseGone = leaseGone;
    }

    static EtcdRefusedException of(String what, String describe, Throwable cause) {
        String text = String.valueOf(cause.getMessage());
        boolean leaseGone = false;
        for (Throwable c = cause; c != null; c = c.getCause()) {
            leaseGone |= c instanceof io.etcd.jetcd.lease.NoSuchLeaseException
                    || String.valueOf(c.getMessage()).contains("lease not found");
        }
        Status.Code code = Status.fromThrowable(cause).getCode();
        String hint = switch (code) {
            case UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT, FAILED_PRECONDITION ->
                leaseGone ? "" : "; check the user, password and role permissions in the URI";
            default -> "";
        };
        return new EtcdRefusedException(
                "etcd " + describe + " refused to " + what + ": " + code + " " + text + hint, cause, leaseGone);
    }

    /** @return whether etcd said the lease of the request does not exist (expired or revoked) */
    boolean isLeaseGone() {
        return leaseGone;
    }
}
