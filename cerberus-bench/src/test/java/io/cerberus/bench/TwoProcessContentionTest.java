package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A contended-2p child that fails or does not answer fails its cell with a message, and is gone; no server needed. */
class TwoProcessContentionTest {
    private static final PeerSpec NO_PEER = new PeerSpec("redis", "nosuch", "127.0.0.1:1", 0);

    private static List<String> arguments(PeerSpec spec) {
        return ContendedWorker.arguments(1, Path.of("unused.samples"), spec);
    }

    @Test
    void aChildThatFailsToBuildItsPeerFailsTheCellWithItsReason() {
        try (ChildJvm child = ChildJvm.start("no peer", arguments(NO_PEER), NO_PEER.environment())) {
            assertThatThrownBy(() -> child.await("READY", Duration.ofSeconds(60)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("failed before saying READY")
                    .hasMessageContaining("no distributed lock peer 'nosuch' on redis")
                    .hasMessageContaining("stderr (");
        }
    }

    @Test
    void aChildThatDoesNotAnswerInTimeIsDestroyed() {
        try (ChildJvm child = ChildJvm.start("slow", arguments(NO_PEER), NO_PEER.environment())) {
            assertThatThrownBy(() -> child.await("READY", Duration.ofMillis(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("did not say READY within 1 ms")
                    .hasMessageContaining("it was destroyed");
            assertThat(child.isAlive()).isFalse();
        }
    }

    @Test
    void theThreadsAreSplitWithTheOddOneHere() {
        assertThat(List.of(TwoProcessContention.here(2), TwoProcessContention.inChild(2)))
                .containsExactly(1, 1);
        assertThat(List.of(TwoProcessContention.here(5), TwoProcessContention.inChild(5)))
                .containsExactly(3, 2);
    }
}
