package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.cerberus.servers.Deployment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/** {@link ServerExtension} starts, heals, shares and stops the servers a class declares, when it says. */
class ServerExtensionTest {
    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    @BeforeEach
    void clear() {
        EVENTS.clear();
    }

    @Test
    void perClassServersLiveAsLongAsTheClassAndAreHealedAfterEachTest() {
        run(PerClass.class);

        assertThat(EVENTS).containsExactly("start a", "test a", "heal a", "test a", "heal a", "close a");
    }

    @Test
    void nestedClassesRunInTheirEnclosingClasssServersWhichCloseOnceAfterThem() {
        run(WithNested.class);

        assertThat(EVENTS).containsExactly("start e", "test e", "nested e", "close e");
    }

    @Test
    void sharedServersStartOnceForEveryClassThatNamesThemAndCloseWhenTheRunEnds() {
        run(SharedFirst.class, SharedSecond.class);

        assertThat(EVENTS).containsExactly("start b", "test b", "test b", "close b");
    }

    @Test
    void theServersAreAsked_forOutsideTheClassesTests_isAClearError() {
        ServerExtension<FakeServers> unstarted = ServerExtension.perClass(() -> new FakeServers("c"));

        assertThatThrownBy(unstarted::uri)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@RegisterExtension");
        assertThatThrownBy(() -> ServerExtension.shared(" ", () -> new FakeServers("d")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
    }

    private static void run(Class<?>... classes) {
        var request = LauncherDiscoveryRequestBuilder.request();
        for (Class<?> type : classes) {
            request.selectors(selectClass(type));
        }
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request.build(), listener);
        assertThat(listener.getSummary().getFailures()).isEmpty();
    }

    record FakeServers(String name) implements Deployment {
        FakeServers {
            EVENTS.add("start " + name);
        }

        @Override
        public String uri() {
            return "fake://" + name;
        }

        @Override
        public void heal() {
            EVENTS.add("heal " + name);
        }

        @Override
        public void close() {
            EVENTS.add("close " + name);
        }
    }

    static class PerClass {
        @RegisterExtension
        static final ServerExtension<FakeServers> SERVERS =
                ServerExtension.perClass(() -> new FakeServers("a")).healAfterEach();

        @Test
        void first() {
            EVENTS.add("test " + SERVERS.get().name());
        }

        @Test
        void second() {
            assertThat(SERVERS.uri()).isEqualTo("fake://a");
            EVENTS.add("test " + SERVERS.get().name());
        }
    }

    static class WithNested {
        @RegisterExtension
        static final ServerExtension<FakeServers> SERVERS = ServerExtension.perClass(() -> new FakeServers("e"));

        @Test
        void outer() {
            EVENTS.add("test " + SERVERS.get().name());
        }

        @org.junit.jupiter.api.Nested
        class Inner {
            @Test
            void inner() {
                EVENTS.add("nested " + SERVERS.get().name());
            }
        }
    }

    static class SharedFirst {
        @RegisterExtension
        static final ServerExtension<FakeServers> SERVERS = ServerExtension.shared("b", () -> new FakeServers("b"));

        @Test
        void test() {
            EVENTS.add("test " + SERVERS.get().name());
        }
    }

    static class SharedSecond {
        @RegisterExtension
        static final ServerExtension<FakeServers> SERVERS = ServerExtension.shared("b", () -> new FakeServers("b"));

        @Test
        void test() {
            EVENTS.add("test " + SERVERS.get().name());
        }
    }
}
