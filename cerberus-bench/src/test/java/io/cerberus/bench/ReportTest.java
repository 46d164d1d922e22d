package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How the report states a ratio; no server needed. */
class ReportTest {

    private static Bench.Result result(String peer, long cycles, double... rounds) {
        return new Bench.Result(
                "redis",
                "uncontended",
                peer,
                4,
                cycles,
                1.0,
                0,
                0,
                0,
                0,
                0,
                0,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                rounds);
    }

    @Test
    void aCellTakenInTurnsShowsTheLowestAndHighestRatioOfItsRounds() {
        Bench.Result baseline = result("Redisson RLock", 1000, 1000, 800, 1200, 1000);
        Bench.Result ours = result("Cerberus", 1200, 1100, 1000, 1320, 1380);
        assertThat(Report.ratio(ours, baseline)).isEqualTo("1.20× (1.10–1.38)");
        assertThat(Report.ratio(baseline, baseline))
                .as("the baseline against itself")
                .isEqualTo("1.00×");
    }

    @Test
    void aWakeUpRatioIsAboveOneWhenThePeerWakesSoonerThanTheBaseline() {
        Bench.Result baseline = wakeUp("Redisson RLock", 2_000_000);
        assertThat(Report.wakeUpRatio(wakeUp("Cerberus", 500_000), baseline)).isEqualTo("4.00×");
        assertThat(Report.wakeUpRatio(wakeUp("Cerberus", 4_000_000), baseline)).isEqualTo("0.50×");
    }

    private static Bench.Result wakeUp(String peer, long p50) {
        return new Bench.Result(
                "redis",
                Bench.WAKE_UP,
                peer,
                1,
                100,
                3.0,
                p50,
                2 * p50,
                2 * p50,
                3 * p50,
                Double.NaN,
                30,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Bench.NO_ROUNDS);
    }

    @Test
    void aCellMeasuredInOnePieceShowsTheRatioAlone() {
        Bench.Result baseline = result("Redisson RLock", 1000);
        assertThat(Report.ratio(result("Cerberus", 1500), baseline)).isEqualTo("1.50×");
        assertThat(Report.ratio(result("Cerberus", 1500, 1, 2, 3, 4), baseline))
                .as("rounds on one side only")
                .isEqualTo("1.50×");
    }
}
