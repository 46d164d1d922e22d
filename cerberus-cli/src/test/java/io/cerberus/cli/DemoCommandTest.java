package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class DemoCommandTest {
    private static final Pattern TOTAL = Pattern.compile("Total sold: (\\d+), final stock: (-?\\d+)");
    private static final Duration DEMO = Duration.ofSeconds(30);

    @Test
    void withoutTheLockTheSaleOversells() {
        Cli.Result demo = Cli.run(DEMO, "demo", "--no-lock", "--seconds", "2");

        assertThat(demo.exitCode()).as(demo.toString()).isZero();
        assertThat(sold(demo)).as(demo.toString()).isGreaterThan(10);
        assertThat(demo.stdout()).contains("OVERSOLD by ");
    }

    @Test
    void withTheLockEveryItemIsSoldExactlyOnce() {
        Cli.Result demo = Cli.run(DEMO, "demo", "--seconds", "2");

        assertThat(demo.exitCode()).as(demo.toString()).isZero();
        assertThat(demo.stdout())
                .as(demo.toString())
                .contains("Engine: file:")
                .contains("Lock:   'flash-sale:stock' around each purchase")
                .contains("Total sold: 10, final stock: 0")
                .contains("no oversell")
                .doesNotContain("OVERSOLD");
        assertThat(demo.stderr()).as("a routine run prints nothing on stderr").isEmpty();
    }

    @Test
    void oneJvmEngineIsRefusedWithAClearMessage() {
        Cli.Result demo = Cli.run(DEMO, "demo", "--engine", "mem:");

        assertThat(demo.exitCode()).as(demo.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(demo.stderr().lines())
                .singleElement()
                .asString()
                .startsWith("cerberus demo: the demo needs an engine shared by processes")
                .contains("mem:");
        assertThat(demo.stdout()).isEmpty();
    }

    private static int sold(Cli.Result demo) {
        Matcher m = TOTAL.matcher(demo.stdout());
        assertThat(m.find()).as("a total in " + demo).isTrue();
        return Integer.parseInt(m.group(1));
    }
}
