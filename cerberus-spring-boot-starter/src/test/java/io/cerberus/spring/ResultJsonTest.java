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
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

/** What {@link ResultJson} writes, reads back, and refuses to read. */
class ResultJsonTest {
    interface Shape {}

    record Circle(double radius) implements Shape {}

    record Label(String text) {}

    record LabelPair(String firstText, Label second) {}

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

    LabelPair pair() {
        return null;
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
        for (Object value :
                List.of(42L, new BigDecimal("10.50"), "text", Instant.parse("2024-05-01T10:15:30Z"), new Label("l"))) {
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
        assertThatThrownBy(
                        () -> codec("anything").decode(json("{\"@class\":\"java.lang.ProcessBuilder\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("refused");
        assertThatThrownBy(
                        () -> codec("serializable").decode(json("{\"@class\":\"java.util.ArrayList\",\"@value\":[]}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("refused");
        assertThatThrownBy(() ->
                        codec("anything").decode(json("{\"@class\":\"" + Pojo.class.getName() + "\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("refused");
    }

    @Test
    void aResultOutsideTheRuleIsStoredAsTheDeclaredType() throws Exception {
        ResultJson codec = codec("anything");
        assertThat(codec.decode(codec.encode(new Pojo()))).isEqualTo(Map.of("name", "p"));
    }

    @Test
    void aMissingClassIsRefusedSayingSo() throws Exception {
        assertThatThrownBy(() -> codec("shape").decode(json("{\"@class\":\"com.example.Gone\",\"@value\":{}}")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("com.example.Gone, which this application does not have");
    }

    @Test
    void plainJsonOfTheDeclaredTypeIsStillRead() throws Exception {
        assertThat(codec("labels").decode(json("[{\"text\":\"old\"}]"))).isEqualTo(List.of(new Label("old")));
        assertThat(codec("count").decode(json("12"))).isEqualTo(12L);
    }

    @Test
    void whatJackson2StoredJackson3ReadsAsTheSameValue() throws Exception {
        for (String method : List.of("shape", "anything", "labels", "count", "pair")) {
            java.lang.reflect.Method declared = ResultJsonTest.class.getDeclaredMethod(method);
            Object value = switch (method) {
                case "shape" -> new Circle(2.5);
                case "anything" -> new BigDecimal("10.50");
                case "labels" -> new ArrayList<>(List.of(new Label("a"), new Label("b")));
                case "count" -> 7L;
                default -> new LabelPair("x", new Label("y"));
            };
            byte[] stored = new Jackson2ResultJson(declared).encode(value);
            assertThat(new ResultJson(declared).decode(stored))
                    .as(method)
                    .isEqualTo(value)
                    .hasSameClassAs(value);
            assertThat(new Jackson2ResultJson(declared).decode(new ResultJson(declared).encode(value)))
                    .as(method)
                    .isEqualTo(value);
        }
    }

    @Test
    void theApplicationsJsonMapperWritesTheResult() throws Exception {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton(
                "jsonMapper",
                JsonMapper.builder()
                        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                        .build());
        ResultJsons json = new ResultJsons(beans);
        io.cerberus.idempotency.ResultCodec<Object> codec = json.codec(ResultJsonTest.class.getDeclaredMethod("pair"));
        byte[] stored = codec.encode(new LabelPair("x", new Label("y")));
        assertThat(new String(stored, StandardCharsets.UTF_8)).contains("\"first_text\":\"x\"");
        assertThat(codec.decode(stored)).isEqualTo(new LabelPair("x", new Label("y")));
        assertThat(ResultJsons.DEFAULTS
                        .codec(ResultJsonTest.class.getDeclaredMethod("pair"))
                        .encode(new LabelPair("x", null)))
                .asString(StandardCharsets.UTF_8)
                .contains("\"firstText\"");
    }
}
