package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which etcd versions let any user read the key names attached to another user's lease (CVE-2023-32082). */
class KeyNameExposureTest {

    @Test
    void versionsBeforeTheFixExposeKeyNames() {
        assertThat(KeyNameExposure.exposesKeyNames("3.4.23")).isTrue();
        assertThat(KeyNameExposure.exposesKeyNames("3.4.25")).isTrue();
        assertThat(KeyNameExposure.exposesKeyNames("3.5.0")).isTrue();
        assertThat(KeyNameExposure.exposesKeyNames("3.5.8")).isTrue();
        assertThat(KeyNameExposure.exposesKeyNames("3.3.27"))
                .as("older than 3.4")
                .isTrue();
        assertThat(KeyNameExposure.exposesKeyNames("2.3.8")).isTrue();
    }

    @Test
    void fixedVersionsDoNot() {
        assertThat(KeyNameExposure.exposesKeyNames("3.4.26")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("3.4.37")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("3.5.9")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("3.5.21")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("3.6.0")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("4.0.0")).isFalse();
        assertThat(KeyNameExposure.exposesKeyNames("unknown"))
                .as("a version that cannot be read warns of nothing")
                .isFalse();
    }
}
