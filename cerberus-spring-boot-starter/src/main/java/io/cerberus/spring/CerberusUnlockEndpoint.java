package io.cerberus.spring;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsupportedCapabilityException;
import java.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.lang.Nullable;

/**
 * The actuator endpoint {@code cerberusunlock}: an operator frees a stuck lock that another process
 * holds ({@link Cerberus#forceRelease}), over HTTP. {@code POST /actuator/cerberusunlock/{name}} with
 * {@code {"fencingToken": N}}, the token the {@code cerberus} endpoint lists for the hold: a lock
 * that changed hands since has a newer token and is not freed.
 *
 * <p><b>Off unless asked for, and only for a user who logged in.</b> Its access is {@code none} by
 * default (on with {@code management.endpoint.cerberusunlock.access=unrestricted}, and exposed like
 * any endpoint); a request without an authenticated principal is refused (403), so it answers only
 * behind the application's security. Each call is logged at WARN with the user, and by the client
 * with the old holder.
 *
 * <p>Answers: 200 freed; 409 nothing freed (not held, or no hold has that token now); 400 a bad name
 * or an engine that cannot free another's hold; 403 no user; 503 the engine unreachable.
 */
@WebEndpoint(id = "cerberusunlock", defaultAccess = Access.NONE)
public class CerberusUnlockEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(CerberusUnlockEndpoint.class);

    private static final int FORBIDDEN = 403;
    private static final int CONFLICT = 409;
    private static final int UNAVAILABLE = 503;

    private final Cerberus cerberus;

    /** @param cerberus the client whose current engine holds the locks */
    public CerberusUnlockEndpoint(Cerberus cerberus) {
        this.cerberus = cerberus;
    }

    /**
     * @param name the lock to free
     * @param fencingToken the fencing token of the hold to free
     * @param user who asks; null when no one logged in (refused)
     * @return what was done, with the status above
     */
    @WriteOperation
    @SuppressWarnings("deprecation") // Spring's @Nullable: the one both Boot 3 and Boot 4 take
    public WebEndpointResponse<Result> unlock(@Selector String name, long fencingToken, @Nullable Principal user) {
        if (user == null) {
            return answer(
                    FORBIDDEN,
                    name,
                    fencingToken,
                    "refused: no authenticated user. This endpoint frees locks that other processes hold; put it"
                            + " behind the application's security (a role for operators)");
        }
        try {
            boolean freed = cerberus.forceRelease(name, fencingToken);
            LOG.warn(
                    "force release of lock '{}' (fencing token {}) asked by '{}' through the actuator: {}",
                    name,
                    fencingToken,
                    user.getName(),
                    freed ? "freed" : "nothing freed");
            return freed
                    ? answer(
                            WebEndpointResponse.STATUS_OK,
                            name,
                            fencingToken,
                            "freed; its holder learns that it lost the lock")
                    : answer(
                            CONFLICT,
                            name,
                            fencingToken,
                            "not freed: no hold has that fencing token now (it was released, or it changed hands)");
        } catch (IllegalArgumentException | UnsupportedCapabilityException e) {
            return answer(WebEndpointResponse.STATUS_BAD_REQUEST, name, fencingToken, e.getMessage());
        } catch (EngineUnavailableException e) {
            return answer(UNAVAILABLE, name, fencingToken, e.getMessage());
        }
    }

    private static WebEndpointResponse<Result> answer(int status, String name, long fencingToken, String message) {
        return new WebEndpointResponse<>(
                new Result(name, fencingToken, status == WebEndpointResponse.STATUS_OK, message), status);
    }

    /**
     * @param name the lock
     * @param fencingToken the token asked for
     * @param freed whether a hold was freed
     * @param message what happened, in a sentence
     */
    public record Result(String name, long fencingToken, boolean freed, String message) {}
}
