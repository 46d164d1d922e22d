package io.cerberus.spring;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.LockContention;
import io.cerberus.LockInfo;
import io.cerberus.spi.support.Redaction;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.lang.Nullable;

/**
 * The actuator endpoint {@code cerberus}: the locks held now in the client's namespace, per engine
 * ({@link Cerberus#inspectEngine}), and the locks this application waited for most
 * ({@link Cerberus#contention()}). Read-only: it releases nothing. A snapshot that may be stale
 * as soon as it is read. {@code GET /actuator/cerberus} lists every engine,
 * {@code GET /actuator/cerberus/{engine}} one; both take {@code ?prefix=} to list only names
 * starting with it.
 */
@Endpoint(id = "cerberus")
public class CerberusLocksEndpoint {
    /** How many of the most contended locks it lists. */
    static final int MOST_CONTENDED = 20;

    private final Cerberus cerberus;

    /**
     * @param cerberus the client whose holds are listed
     */
    public CerberusLocksEndpoint(Cerberus cerberus) {
        this.cerberus = cerberus;
    }

    /**
     * @param prefix only names starting with it; all when absent
     * @return the namespace, the current engine, the holds of every engine, and the
     *     {@value #MOST_CONTENDED} locks this application waited for most
     */
    @ReadOperation
    @SuppressWarnings(
            "deprecation") // Spring's @Nullable: the one both Boot 3 and Boot 4 take for an optional parameter
    public Locks locks(@Nullable String prefix) {
        Map<String, EngineLocks> engines = new LinkedHashMap<>();
        for (String engine : cerberus.engines()) {
            engines.put(engine, engineLocks(engine, prefix));
        }
        List<Contended> contended = cerberus.contention().stream()
                .filter(lock -> prefix == null || lock.name().startsWith(prefix))
                .limit(MOST_CONTENDED)
                .map(Contended::of)
                .toList();
        return new Locks(cerberus.namespace(), cerberus.currentEngine(), engines, contended);
    }

    /**
     * @param engine the engine's name
     * @param prefix only names starting with it; all when absent
     * @return the holds on that engine, or null (404) when the client has no such engine
     */
    @ReadOperation
    @SuppressWarnings("deprecation") // as above
    public EngineLocks engineLocks(@Selector String engine, @Nullable String prefix) {
        if (!cerberus.engines().contains(engine)) {
            return null;
        }
        String uri = cerberus.engineUri(engine);
        try {
            List<Hold> holds = cerberus.inspectEngine(engine, prefix == null ? "" : prefix).stream()
                    .map(Hold::of)
                    .toList();
            return new EngineLocks(uri, holds, null);
        } catch (RuntimeException e) {
            // an engine that cannot list (or cannot be reached) is reported, the others still listed
            return new EngineLocks(uri, null, e.getMessage());
        }
    }

    /**
     * @param namespace the client's namespace
     * @param currentEngine the engine new acquisitions go to
     * @param engines per engine name, its holds
     * @param contended the locks this application waited for most, the most total wait first
     */
    public record Locks(
            String namespace, String currentEngine, Map<String, EngineLocks> engines, List<Contended> contended) {}

    /**
     * A lock this application waited for (see {@link LockContention}); the most total wait first.
     *
     * @param name the lock name
     * @param contended acquisitions that found it busy
     * @param totalWaitMillis their waits, added up
     * @param longestWaitMillis the longest of them
     * @param timedOut how many of them gave up
     * @param lastHolder who held it when it was last found busy; null when not read (the client
     *     reads it only when its waits are observed)
     */
    public record Contended(
            String name,
            long contended,
            long totalWaitMillis,
            long longestWaitMillis,
            long timedOut,
            String lastHolder) {
        static Contended of(LockContention lock) {
            return new Contended(
                    lock.name(),
                    lock.contended(),
                    lock.totalWait().toMillis(),
                    lock.longestWait().toMillis(),
                    lock.timedOut(),
                    lock.lastHolder().isEmpty() ? null : lock.lastHolder());
        }
    }

    /**
     * @param uri the engine URI, {@linkplain Redaction#redact redacted} here whatever it is given
     * @param locks the holds; null when they could not be listed
     * @param error why they could not be listed ({@link Capability#INSPECT} missing, engine down); null otherwise
     */
    public record EngineLocks(String uri, List<Hold> locks, String error) {
        /** Redacts the URI. */
        public EngineLocks {
            uri = Redaction.redact(uri);
        }
    }

    /**
     * One hold (see {@link LockInfo}).
     *
     * @param name the lock name
     * @param mode exclusive, fair, read or write
     * @param holder who holds it
     * @param fencingToken the fencing token, null when the engine has none
     * @param leaseRemainingMillis how long the engine keeps it without renewal; null when it lives with the holder's session
     * @param waiters clients waiting for it; null when the engine cannot tell
     */
    public record Hold(
            String name, String mode, String holder, Long fencingToken, Long leaseRemainingMillis, Integer waiters) {
        static Hold of(LockInfo info) {
            return new Hold(
                    info.name(),
                    info.mode(),
                    info.holder(),
                    info.fencingToken() < 0 ? null : info.fencingToken(),
                    info.leaseRemaining().map(java.time.Duration::toMillis).orElse(null),
                    info.waiters() < 0 ? null : info.waiters());
        }
    }
}
