package io.cerberus.fencing;

import io.cerberus.Fence;

/**
 * Where a protected service keeps, per resource, the newest fence it has seen on the requests that
 * reach it, so that it refuses a request sent by a holder whose lock has since passed on (the fence
 * travels with the request: {@code Cerberus-Fence} in the starter's HTTP filter). Backed by a SQL
 * table ({@link FencedRows#keeper}) or Redis ({@code FencedRedis.keeper()} in cerberus-redis).
 *
 * <p>Admitting a fence is a fenced read of the resource: once a newer holder's request was admitted,
 * an older holder's is refused, whatever order they then finish in. It does not order the work a
 * request does after it was admitted; fence the service's own store with the same fence for that.
 * Implementations are thread-safe.
 */
@FunctionalInterface
public interface FenceKeeper {

    /**
     * Records {@code fence} as the newest of {@code resource}, unless it has seen a newer one.
     *
     * @param resource what the fence is for (the lock name, by default), at most 512 characters
     * @param fence the request's fence
     * @throws StaleFenceException if the resource has seen a newer fence
     * @throws io.cerberus.CerberusException if the keeper's store cannot be reached
     */
    void admit(String resource, Fence fence);

    /**
     * @param resource a fenced resource's name
     * @return the name, checked: 1 to 512 characters
     * @throws IllegalArgumentException if it is not, naming the rule
     */
    static String checkedResource(String resource) {
        if (resource == null || resource.isEmpty() || resource.length() > 512) {
            throw new IllegalArgumentException("a fenced resource's name must be 1 to 512 characters, was "
                    + (resource == null ? "null" : resource.length() + " characters"));
        }
        return resource;
    }
}
