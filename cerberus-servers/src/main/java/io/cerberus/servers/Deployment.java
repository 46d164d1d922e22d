package io.cerberus.servers;

/**
 * Real servers that one engine URI points at: a single server, or a group (a Redis Sentinel
 * set, a cluster, an ensemble) started together. It is what a test declares and hands to a
 * suite, and what {@code cerberus servers} prints. Closing it stops every process it started.
 */
public interface Deployment extends AutoCloseable {

    /** @return the engine URI that reaches it, e.g. {@code redis://127.0.0.1:15001} */
    String uri();

    /**
     * Undoes the process faults a test injected: resumes paused processes and starts killed ones
     * again, so the next test finds every server serving. Data lost to a kill stays lost.
     *
     * @throws ServerException if a server does not come back in time
     */
    void heal();

    /** Stops every process it started and waits for them. */
    @Override
    void close();
}
