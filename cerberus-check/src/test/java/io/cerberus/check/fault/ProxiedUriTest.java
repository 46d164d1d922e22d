package io.cerberus.check.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.servers.FaultProxy;
import org.junit.jupiter.api.Test;

/** A check client's URI with each server behind a proxy of its own, for {@code --faults partition}. */
class ProxiedUriTest {

    @Test
    void everyServerOfAnEnsembleGetsItsOwnProxyAndThePathAndQueryStay() {
        ProxiedUri proxied = ProxiedUri.start("zk://127.0.0.1:2181,127.0.0.1:2182,localhost/locks?sessionTimeout=1s");
        try {
            assertThat(proxied.proxies()).hasSize(3);
            assertThat(proxied.uri())
                    .isEqualTo("zk://127.0.0.1:" + proxied.proxies().get(0).port() + ",127.0.0.1:"
                            + proxied.proxies().get(1).port() + ",127.0.0.1:"
                            + proxied.proxies().get(2).port() + "/locks?sessionTimeout=1s");
        } finally {
            proxied.proxies().forEach(FaultProxy::close);
        }
    }

    @Test
    void userInformationIsKept() {
        ProxiedUri proxied = ProxiedUri.start("redis://app:s3cret@127.0.0.1:6379/2");
        try {
            assertThat(proxied.uri())
                    .isEqualTo("redis://app:s3cret@127.0.0.1:"
                            + proxied.proxies().get(0).port() + "/2");
        } finally {
            proxied.proxies().forEach(FaultProxy::close);
        }
    }

    @Test
    void aJdbcUrlKeepsItsDatabaseAndParameters() {
        ProxiedUri proxied = ProxiedUri.start("jdbc:postgresql://127.0.0.1:5432/app?user=check&cerberus.mode=session");
        try {
            assertThat(proxied.uri())
                    .isEqualTo("jdbc:postgresql://127.0.0.1:"
                            + proxied.proxies().get(0).port() + "/app?user=check&cerberus.mode=session");
        } finally {
            proxied.proxies().forEach(FaultProxy::close);
        }
    }

    @Test
    void anH2TcpUrlKeepsItsDatabaseAndSettings() {
        ProxiedUri proxied = ProxiedUri.start("jdbc:h2:tcp://127.0.0.1:9092/mem:app;DB_CLOSE_DELAY=-1");
        try {
            assertThat(proxied.uri())
                    .isEqualTo("jdbc:h2:tcp://127.0.0.1:"
                            + proxied.proxies().get(0).port() + "/mem:app;DB_CLOSE_DELAY=-1");
        } finally {
            proxied.proxies().forEach(FaultProxy::close);
        }
        assertThat(ProxiedUri.proxiable("jdbc:h2:mem:app"))
                .as("an H2 database inside the client has no server")
                .isFalse();
    }

    @Test
    void memcachedServersKeepTheirOrderAndTheTimeoutStays() {
        // the engine finds a lock's server by its index in the URI, so the proxies must keep the order
        ProxiedUri proxied = ProxiedUri.start("memcached://127.0.0.1:11311,127.0.0.1?timeout=2s");
        try {
            assertThat(proxied.uri())
                    .isEqualTo(
                            "memcached://127.0.0.1:" + proxied.proxies().get(0).port() + ",127.0.0.1:"
                                    + proxied.proxies().get(1).port() + "?timeout=2s");
        } finally {
            proxied.proxies().forEach(FaultProxy::close);
        }
    }

    @Test
    void enginesWithoutServersInTheirUriCannotBeProxied() {
        assertThat(ProxiedUri.proxiable("file:/tmp/locks")).isFalse();
        assertThat(ProxiedUri.proxiable("redis-sentinel://127.0.0.1:26379#locks"))
                .isFalse();
        assertThat(ProxiedUri.proxiable("etcd://127.0.0.1:2379")).isTrue();
        assertThatThrownBy(() -> ProxiedUri.start("mem:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mem:");
    }
}
