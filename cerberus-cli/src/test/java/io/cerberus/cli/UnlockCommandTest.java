package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Path;
import java.time.Duration;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code unlock --force} frees a hold of another process on a real Redis, named by its fencing token. */
class UnlockCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(20);

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    @Test
    void withoutTokenShowsTheHoldFreesItAndTheHolderLearns() throws Exception {
        try (Cerberus holder = Cerberus.builder()
                .engine(REDIS.uri())
                .defaultLease(Duration.ofSeconds(2))
                .build()) {
            Lease stuck = holder.lock("stuck:report").acquire(Duration.ZERO);

            Cli.Result freed = Cli.run(QUICK, "unlock", "stuck:report", "--force", "--engine", REDIS.uri());

            assertThat(freed.exitCode()).as(freed.toString()).isZero();
            assertThat(freed.stdout())
                    .contains("lock 'stuck:report' (exclusive) held by "
                            + ProcessHandle.current().pid() + "@")
                    .contains("fencing token " + stuck.fencingToken() + ", lease left ")
                    .contains("freed lock 'stuck:report' (fencing token " + stuck.fencingToken() + ")");
            Poll.until("the holder learns it lost the lock", TestTimes.scaled(QUICK), () -> !stuck.isValid());
            Assertions.assertThatThrownBy(stuck::close).isInstanceOf(LockLostException.class);

            Cli.Result again = Cli.run(QUICK, "unlock", "stuck:report", "--force", "--engine", REDIS.uri());
            assertThat(again.exitCode()).as(again.toString()).isEqualTo(1);
            assertThat(again.stderr()).contains("lock 'stuck:report' is not held: nothing to free");
        }
    }

    @Test
    void withTokenFreesOnlyTheHoldWithThatToken() throws Exception {
        try (Cerberus holder = Cerberus.connect(REDIS.uri())) {
            try (Lease held = holder.lock("stuck:token").acquire(Duration.ZERO)) {
                String older = Long.toString(held.fencingToken() - 1);

                Cli.Result refused =
                        Cli.run(QUICK, "unlock", "stuck:token", "--force", "--token", older, "--engine", REDIS.uri());

                assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(1);
                assertThat(refused.stderr())
                        .contains("lock 'stuck:token' was not freed: no hold has fencing token " + older + " now");
                assertThat(held.isValid()).isTrue();
                assertThat(holder.lock("stuck:token").isLocked()).isTrue();
            }
        }
    }

    @Test
    void withoutForceItIsRefusedAndNothingIsFreed() throws Exception {
        try (Cerberus holder = Cerberus.connect(REDIS.uri())) {
            try (Lease held = holder.lock("stuck:unforced").acquire(Duration.ZERO)) {
                Cli.Result refused = Cli.run(QUICK, "unlock", "stuck:unforced", "--engine", REDIS.uri());

                assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(64);
                assertThat(refused.stderr()).contains("refused without --force");
                assertThat(held.isValid()).isTrue();
            }
        }
    }

    @Test
    void anEngineThatCannotFreeAnotherProcesssHoldSaysWhy() throws Exception {
        String engine = "file:" + dir.resolve("locks");
        try (Cerberus holder = Cerberus.connect(engine)) {
            try (Lease held = holder.lock("stuck:file").acquire(Duration.ZERO)) {
                Cli.Result refused = Cli.run(QUICK, "unlock", "stuck:file", "--force", "--engine", engine);

                assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(64);
                assertThat(refused.stderr()).contains("cannot free a lock held by another process");
                assertThat(held.isValid()).isTrue();
            }
        }
    }

    @Test
    void badInputAndAnUnreachableEngineGetTheirExitCodes() {
        Cli.Result badName = Cli.run(QUICK, "unlock", "", "--force", "--engine", REDIS.uri());
        Cli.Result unreachable = Cli.run(
                QUICK,
                "unlock",
                "stuck",
                "--force",
                "--token",
                "7",
                "--engine",
                "redis://127.0.0.1:" + FreePorts.next());

        assertThat(badName.exitCode()).as(badName.toString()).isEqualTo(64);
        assertThat(badName.stderr()).contains("lock name");
        assertThat(unreachable.exitCode()).as(unreachable.toString()).isEqualTo(69);
    }
}
