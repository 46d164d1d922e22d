package io.cerberus.testkit;

import io.cerberus.servers.Deployment;
import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real servers declared by a test class: a static field registered with {@code @RegisterExtension}
 * starts them before the class's first test and hands out their URI:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ServerExtension<MemcachedServer> SERVER = ServerExtension.perClass(() -> MemcachedServer.builder().start());
 *
 * protected String engineUri() { return SERVER.uri(); }
 * }</pre>
 *
 * {@link #perClass} servers stop after the class's last test; {@link #shared} ones (slow to start,
 * such as a Redis Cluster) are started once per JVM under a name, and stopped by JUnit when the
 * test run ends, never by a shutdown hook. With {@link #healAfterEach()} the servers are healed
 * ({@link Deployment#heal()}) after each test, so a test that killed or paused one leaves it
 * serving for the next. {@link #get()} outside the class's tests is an {@link IllegalStateException}.
 *
 * @param <D> the kind of servers
 */
public final class ServerExtension<D extends Deployment>
        implements BeforeAllCallback, AfterAllCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(ServerExtension.class);

    private final String sharedName;
    private final Supplier<D> start;
    private final boolean heal;
    private D servers;
    /** The test class whose servers these are: a {@code @Nested} class inside it shares them. */
    private Class<?> owner;

    private ServerExtension(String sharedName, Supplier<D> start, boolean heal) {
        this.sharedName = sharedName;
        this.start = Objects.requireNonNull(start, "start");
        this.heal = heal;
    }

    /**
     * @param start starts the servers, e.g. {@code () -> RedisServer.start()}
     * @param <D> the kind of servers
     * @return an extension whose servers live as long as the test class
     */
    public static <D extends Deployment> ServerExtension<D> perClass(Supplier<D> start) {
        return new ServerExtension<>(null, start, false);
    }

    /**
     * @param name the name classes share the servers under: the first class to ask starts them,
     *     the others with the same name get the same servers; must not be blank
     * @param start starts the servers
     * @param <D> the kind of servers
     * @return an extension whose servers live until the test run ends
     * @throws IllegalArgumentException if the name is blank
     */
    public static <D extends Deployment> ServerExtension<D> shared(String name, Supplier<D> start) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a shared server needs a name, was '" + name + "'");
        }
        return new ServerExtension<>(name, start, false);
    }

    /** @return a copy of this extension that heals the servers after each test */
    public ServerExtension<D> healAfterEach() {
        return new ServerExtension<>(sharedName, start, true);
    }

    /**
     * @return the running servers
     * @throws IllegalStateException if the class's servers are not started (outside its tests)
     */
    public D get() {
        if (servers == null) {
            throw new IllegalStateException(
                    "the servers are started before the test class's first test; is the field static and "
                            + "registered with @RegisterExtension?");
        }
        return servers;
    }

    /** @return the engine URI of the running servers */
    public String uri() {
        return get().uri();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (sharedName == null) {
            if (servers == null) { // a @Nested class runs inside its enclosing class's servers, not its own
                servers = start.get();
                owner = context.getRequiredTestClass();
            }
        } else {
            @SuppressWarnings("unchecked")
            Shared<D> shared = context.getRoot()
                    .getStore(SHARED)
                    .computeIfAbsent(sharedName, name -> new Shared<>(start.get()), Shared.class);
            servers = shared.servers;
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (heal && servers != null) {
            servers.heal();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (sharedName == null && servers != null && context.getRequiredTestClass() == owner) {
            try {
                servers.close();
            } finally {
                servers = null;
                owner = null;
            }
        }
    }

    /** Shared servers in the root store: JUnit closes them when the test run ends. */
    private record Shared<D extends Deployment>(D servers) implements AutoCloseable {
        @Override
        public void close() {
            servers.close();
        }
    }
}
