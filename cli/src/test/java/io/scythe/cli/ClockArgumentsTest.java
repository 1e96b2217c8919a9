package io.scythe.cli;

import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code scythe sim}'s clock options: --clock, --clock-spread, --clock-config, and where they land. */
class ClockArgumentsTest {
    private static final Path CLOCKS_YAML = Path.of(System.getProperty("user.dir")).getParent()
        .resolve("conf/fabric/clocks.yaml");

    @Test
    void shouldSetEveryNodesClocksThenOneNodesThenTheSpread() throws Exception {
        final ClockOptions clocks = ClockArguments.parse(null,
            List.of("nic=-40", "host=1500000,-12.5", "mn0.nic=300,2", "cn1.e3.host=0"),
            List.of("nic=100,0.5"), 9);
        assertThat(clocks.nicDefault()).isEqualTo(new ClockDeviation(-40, 0));
        assertThat(clocks.hostOf("cn0")).isEqualTo(new ClockDeviation(1_500_000, -12.5));
        assertThat(clocks.nicOf("mn0")).isEqualTo(new ClockDeviation(300, 2));
        assertThat(clocks.hostOf("cn1.e3")).as("node names may hold dots").isEqualTo(ClockDeviation.NONE);
        assertThat(clocks.nicSpread()).isEqualTo(new ClockDeviation(100, 0.5));
        assertThat(clocks.seed()).as("the draws follow --seed").isEqualTo(9);
        assertThat(clocks.nicOf("cn0").offsetNs()).isBetween(-140L, 60L);
    }

    @Test
    void shouldReadTheDocumentedProfileWithFlagsOnTop() throws Exception {
        final ClockOptions clocks = ClockArguments.parse(CLOCKS_YAML, List.of("tso.host=5"), List.of(), 4);
        assertThat(clocks.nicSpread()).isEqualTo(new ClockDeviation(100, 20));
        assertThat(clocks.hostSpread()).isEqualTo(new ClockDeviation(1_000_000, 20));
        assertThat(clocks.nicOf("mn0")).as("the reference NIC").isEqualTo(ClockDeviation.NONE);
        assertThat(clocks.hostOf("tso")).isEqualTo(new ClockDeviation(5, 0));
        assertThat(clocks.seed()).isEqualTo(4);
    }

    @Test
    void shouldRefuseMalformedClocksNamingThem() {
        assertThatThrownBy(() -> ClockArguments.parse(null, List.of("cpu=5"), List.of(), 1))
            .hasMessageContaining("--clock cpu=5").hasMessageContaining("nic or host");
        assertThatThrownBy(() -> ClockArguments.parse(null, List.of("nic=5us"), List.of(), 1))
            .hasMessageContaining("--clock nic=5us").hasMessageContaining("OFFSET_NS");
        assertThatThrownBy(() -> ClockArguments.parse(null, List.of("nic=0,2000"), List.of(), 1))
            .hasMessageContaining("driftPpm=2000.0 must be within");
        assertThatThrownBy(() -> ClockArguments.parse(null, List.of(), List.of("mn0.nic=5"), 1))
            .hasMessageContaining("--clock-spread mn0.nic=5");
        assertThatThrownBy(() -> ClockArguments.parse(null, List.of(), List.of("host=-5"), 1))
            .hasMessageContaining("must not be negative");
    }

    @Test
    void shouldRecordTheClocksOfARunAndRefuseThemWhenExploring(@TempDir final Path dir) throws Exception {
        final StringWriter err = new StringWriter();
        final CommandLine cli = ScytheCommand.commandLine();
        cli.setOut(new PrintWriter(new StringWriter(), true));
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute("sim", "--workload", "smallbank", "--accounts", "200", "--protocols", "scythe",
            "--loops", "1", "--clients", "2", "--duration", "50us", "--clock", "mn0.nic=300,2", "--clock-spread",
            "host=1000", "--out", dir.toString())).isZero();
        final JsonObject params = new JsonObject(Files.readString(dir.resolve("results.json")))
            .getJsonObject("params");
        assertThat(params.getJsonObject("clocks").getJsonObject("nodes").getJsonObject("mn0").getJsonObject("nic"))
            .isEqualTo(new JsonObject().put("offsetNs", 300).put("driftPpm", 2.0));
        assertThat(params.getJsonObject("clocks").getJsonObject("spread").getLong("seed")).isEqualTo(1);
        assertThat(cli.execute("sim", "--explore", "1", "--clock", "nic=5")).isNotZero();
        assertThat(err.toString()).contains("--explore runs perfect clocks");
    }
}
