package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Jackson is on the test class path only: core reads its nodes by reflection. */
class IdempotencyKeyJacksonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static String id(Object content) {
        return IdempotencyKey.ofContent("op", content).id();
    }

    @Test
    void aJsonNodeIsTheContentItHolds() throws JsonProcessingException {
        JsonNode node = MAPPER.readTree("{\"b\":[1,2.50,\"x\",null,true],\"a\":{\"z\":1}}");
        Map<String, Object> map =
                Map.of("a", Map.of("z", 1), "b", Arrays.asList(1, new BigDecimal("2.5"), "x", null, true));

        assertThat(IdempotencyKey.canonical(node))
                .isEqualTo("{\"a\":{\"z\":#1},\"b\":[#1,#2.5,\"x\",null,true]}")
                .isEqualTo(IdempotencyKey.canonical(map));
        assertThat(id(node)).isEqualTo(id(MAPPER.convertValue(node, Map.class)));
    }

    @Test
    void differentJsonGivesDifferentIds() throws JsonProcessingException {
        List<String> ids = new ArrayList<>();
        for (String json : List.of(
                "{\"a\":1}",
                "{\"a\":2}",
                "{\"b\":1}",
                "[1,2]",
                "[2,1]",
                "\"text\"",
                "\"other\"",
                "1",
                "1.5",
                "true",
                "false",
                "null",
                "{}",
                "[]")) {
            ids.add(id(MAPPER.readTree(json)));
        }

        assertThat(ids).doesNotHaveDuplicates();
    }

    @Test
    void jsonNumbersCompareByValue() throws JsonProcessingException {
        ObjectMapper decimals = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

        assertThat(id(MAPPER.readTree("{\"n\":1.0}")))
                .isEqualTo(id(decimals.readTree("{\"n\":1.00}")))
                .isEqualTo(id(Map.of("n", 1)));
        assertThat(id(MAPPER.readTree("0.1"))).isEqualTo(id(JsonNodeFactory.instance.numberNode(0.1f)));
    }

    @Test
    void binaryPojoAndMissingNodesAreWhatTheyHold() throws JsonProcessingException {
        JsonNodeFactory nodes = JsonNodeFactory.instance;

        assertThat(IdempotencyKey.canonical(nodes.binaryNode(new byte[] {1, 2})))
                .isEqualTo("b'0102'");
        assertThat(IdempotencyKey.canonical(nodes.pojoNode(List.of("a")))).isEqualTo("[\"a\"]");
        assertThat(IdempotencyKey.canonical(MAPPER.readTree("{}").path("absent")))
                .isEqualTo("null");
    }

    @Test
    void valuesInsideJsonNodesCountTheirNestingLikeAnyOther() {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        assertThat(IdempotencyKey.canonical(IdempotencyKeyCanonicalTest.nested(nodes::pojoNode, 64)))
                .isEqualTo("\"x\"");
        assertThatThrownBy(() -> IdempotencyKey.canonical(IdempotencyKeyCanonicalTest.nested(nodes::pojoNode, 65)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nested more than 64 levels deep");
        for (JsonNode leaf : List.of(nodes.numberNode(7), nodes.booleanNode(true), nodes.binaryNode(new byte[] {1}))) {
            assertThat(IdempotencyKey.canonical(IdempotencyKeyCanonicalTest.nested(leaf, List::of, 64)))
                    .as("%s 64 levels deep is content, as the value it holds is", leaf.getNodeType())
                    .endsWith(IdempotencyKey.canonical(leaf) + "]".repeat(64));
        }
    }
}
