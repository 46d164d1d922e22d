package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/** The annotations over the {@code mem:} engine (the default when no engine is configured). */
@SpringBootTest(classes = AnnotatedServices.class)
class MemEngineAnnotationTest extends AbstractAnnotationTest {

    @Test
    void theDefaultEngineIsMem() {
        assertThat(cerberus.engines()).containsExactly("mem");
    }
}
