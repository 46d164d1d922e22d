package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/** The annotations over the {@code mem:} engine. */
@SpringBootTest(classes = AnnotatedServices.class, properties = "cerberus.engines=mem:")
class MemEngineAnnotationTest extends AbstractAnnotationTest {

    @Test
    void theEngineIsMem() {
        assertThat(cerberus.engines()).containsExactly("mem");
    }
}
