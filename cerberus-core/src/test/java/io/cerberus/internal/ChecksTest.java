package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChecksTest {
    @Test
    void passwordsNeverAppearInRedactedUris() {
        assertThat(Redaction.redact("redis://user:s3cret@host:6379/0")).isEqualTo("redis://****@host:6379/0");
        assertThat(Redaction.redact("jdbc:postgresql://db/app?user=a&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/app?user=****&password=****&ssl=****"); // no jdbc engine here to list
        // plain ones
        assertThat(Redaction.redact("file:/tmp/locks")).isEqualTo("file:/tmp/locks");
    }

    @Test
    void engineUrisNeedAKnownScheme() {
        assertThatThrownBy(() -> Cerberus.connect(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("engine URI must not be empty");
        assertThatThrownBy(() -> Cerberus.connect("/tmp/locks"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start with a scheme");
        assertThatThrownBy(() -> Cerberus.connect("redis://user:pw@localhost:6379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("add cerberus-redis to the class path")
                .hasMessageNotContaining("pw");
        assertThatThrownBy(() -> Cerberus.connect("mem:a/b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mem: URI");
    }

    @Test
    void builderRejectsBadSettings() {
        assertThatThrownBy(() -> Cerberus.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one engine");
        assertThatThrownBy(() -> Cerberus.builder().engine("a", "mem:").engine("a", "mem:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("already used");
        assertThatThrownBy(() -> Cerberus.builder().namespace(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("namespace must not be empty");
        assertThatThrownBy(() -> Cerberus.builder().connectTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connect timeout must be positive");
        assertThatThrownBy(() -> Cerberus.builder().defaultLease(Duration.ofDays(400)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 365 days");
    }

    @Test
    void engineNamesFollowTheirSchemes() {
        try (Cerberus cerberus =
                Cerberus.builder().engine("mem:one").engine("mem:two").build()) {
            assertThat(cerberus.currentEngine()).isEqualTo("mem");
            assertThat(cerberus.currentEngineUri()).isEqualTo("mem:one");
        }
    }

    @Test
    void hugeWaitTimesMeanForeverAndHugeLeasesAreRefused() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:huge")) {
            DistributedLock lock = cerberus.lock("huge");
            assertThat(lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS)).isTrue();
            lock.unlock();
            assertThat(lock.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)))
                    .isPresent()
                    .get()
                    .satisfies(Lease::close);
            assertThatThrownBy(() -> lock.tryLock(0, Long.MAX_VALUE, TimeUnit.DAYS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease time must be at most 365 days");
        }
    }

    @Test
    void leaseTimesFromOneMillisecondToThreeHundredSixtyFiveDaysAreAccepted() {
        assertThat(Checks.leaseTime(Duration.ofDays(365))).isEqualTo(Duration.ofDays(365));
        assertThat(Checks.leaseTime(Duration.ofMillis(1))).isEqualTo(Duration.ofMillis(1));
        assertThatThrownBy(() -> Checks.leaseTime(Duration.ofDays(365).plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 365 days");
        assertThatThrownBy(() -> Checks.leaseTime(Duration.ofNanos(999_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease time must be at least 1ms, was 999999ns");
    }

    @Test
    void aDurationsNanosecondsSaturateAtTheLongestALongHolds() {
        assertThat(Checks.nanos(Duration.ofSeconds(2))).isEqualTo(2_000_000_000L);
        assertThat(Checks.nanos(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void namespacesKeepLocksApart() {
        try (Cerberus a = Cerberus.builder().engine("mem:ns").namespace("a").build();
                Cerberus b = Cerberus.builder().engine("mem:ns").namespace("b").build()) {
            a.lock("same").lock();
            assertThat(b.lock("same").tryLock()).isTrue();
            b.lock("same").unlock();
            a.lock("same").unlock();
        }
    }
}
