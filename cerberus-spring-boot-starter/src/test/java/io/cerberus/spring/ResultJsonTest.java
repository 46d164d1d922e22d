package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@link ResultJson} writes, reads back, and refuses to read. */
class ResultJsonTest {
    interface Shape {
    }

    record Circle(double radius) implements Shape {
    }

    record Label(String text) {
    }

    /** Not a Shape; tells {@link Initialized} when anything initializes it. */
    static class NotAShape {
        static {
            Initialized.notAShape = true;
        }
    }

    static class Initialized {
        static boolean notAShape;
    }

    static class Pojo {
        public String name = "p";
    }

    Shape shape() {
        return null;
    }

    Object anything() {
        return null;
    }

    Serializable serializable() {
        return null;
    }

    List<Label> labels() {
        return null;
    }

    long count() {
        return 0;
    }

    private static ResultJson codec(String method) throws NoSuchMethodException {
        return new ResultJson(ResultJsonTest.class.getDeclaredMethod(method));
    }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aResultOfTheDeclaredClassIsStoredWithoutItsName() throws Exception {
        assertThat(new String(codec("labels").encode(new ArrayList<>(List.of(new Label("a")))), StandardCharsets.UTF_8))
                .isEqualTo("{\"@value\":[{\"text\":\"a\"}]}");
        assertThat(new String(codec("shape").encode(new Circle(2)), StandardCharsets.UTF_8))
                .isEqualTo("{\"@class\":\"" + Circle.class.getName() + "\",\"@value\":{\"radius\":2.0}}");
    }

    @Test
    void jdkValuesAndRecordsReplayUnderObject() throws Exception {
        ResultJson codec = codec("anything");
        for (Object value : List.of(42L, new BigDecimal("10.50"), "text", Instant.parse("2024-05-01T10:15:30Z"), new Label("l"))) {
            assertThat(codec.decode(codec.encode(value))).isEqualTo(value).hasSameClassAs(value);
        }
        assertThat(codec("count").decode(codec("count").encode(7L))).isEqualTo(7L);
    }

    @Test
    void aClassThatIsNotTheDeclaredTypeIsRefusedAndNotInitialized() throws Exception {
        byte[] stored = json("{\"@class\":\"" + NotAShape.class.getName() + "\",\"@value\":{}}");
        assertThatThrownBy(() -> codec("shape").decode(stored))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("names the class " + NotAShape.class.getName())
                .hasMessageContaining("refused");
        assertThat(Initialized.notAShape).isFalse();
    }

    @Test
    void underAJdkTypeOnlyRecordsEnumsAndJdkValuesAreRead() throws Exception {
        assertThatThrownBy(() -> codec("anything").decode(json("{\"@class\":\"java.lang.ProcessBuilder\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("refused");
        assertThatThrownBy(() -> codec("serializable").decode(json("{\"@class\":\"java.util.ArrayList\",\"@value\":[]}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("refused");
        assertThatThrownBy(() -> codec("anything").decode(json("{\"@class\":\"" + Pojo.class.getName() + "\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("refused");
    }

    @Test
    void aResultOutsideTheRuleIsStoredAsTheDeclaredType() throws Exception {
        ResultJson codec = codec("anything");
        assertThat(codec.decode(codec.encode(new Pojo()))).isEqualTo(Map.of("name", "p"));
    }

    @Test
    void aMissingClassIsRefusedSayingSo() throws Exception {
        assertThatThrownBy(() -> codec("shape").decode(json("{\"@class\":\"com.example.Gone\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("com.example.Gone, which this application does not have");
    }

    @Test
    void plainJsonOfTheDeclaredTypeIsStillRead() throws Exception {
        assertThat(codec("labels").decode(json("[{\"text\":\"old\"}]"))).isEqualTo(List.of(new Label("old")));
        assertThat(codec("count").decode(json("12"))).isEqualTo(12L);
    }
}
