package io.cerberus.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import java.time.Duration;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * ShedLock's own provider test suite, unchanged (its published test-support classes), run on a
 * {@link CerberusLockProvider} over one engine: each subclass names the engine. The lock state is
 * read through a second client, as another instance would see it.
 */
abstract class ShedLockSuite extends AbstractExtensibleLockProviderIntegrationTest {
    private Cerberus cerberus;
    private Cerberus observer;
    private CerberusLockProvider provider;

    /** @return the engine URI the provider's client and the observer use */
    protected abstract String engineUri();

    @BeforeEach
    void connect() {
        cerberus = Cerberus.connect(engineUri());
        observer = Cerberus.connect(engineUri());
        // the suite leaves some locks held, as a task that died would: closing waits for none of them
        provider = CerberusLockProvider.builder(cerberus)
                .shutdownWait(Duration.ZERO)
                .build();
    }

    @AfterEach
    void close() {
        provider.close();
        cerberus.close();
        observer.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(observer.lock(CerberusLockProvider.DEFAULT_PREFIX + lockName).isLocked())
                .describedAs("lock '%s' held", lockName)
                .isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(observer.lock(CerberusLockProvider.DEFAULT_PREFIX + lockName).isLocked())
                .describedAs("lock '%s' held", lockName)
                .isTrue();
    }
}
