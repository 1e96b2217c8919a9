package io.scythe.cli;

import io.scythe.cluster.NodeRole;
import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The help says what is true: the files it names exist, and it lists every choice an option accepts. */
class HelpTruthTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Pattern CONF_PATH = Pattern.compile("(?:docker/)?conf/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*/]");

    private static Map<String, CommandLine> commands() {
        return ScytheCommand.commandLine().getSubcommands();
    }

    private static String help(final String command) {
        return commands().get(command).getUsageMessage(CommandLine.Help.Ansi.OFF).replaceAll("\\s+", " ");
    }

    @Test
    void shouldNameOnlyConfigurationFilesThatExist() throws IOException {
        final List<String> named = new ArrayList<>();
        for (final String command : commands().keySet()) {
            final Matcher m = CONF_PATH.matcher(help(command));
            while (m.find()) {
                named.add(m.group());
                assertThat(exists(m.group())).as("'scythe %s --help' names %s", command, m.group()).isTrue();
            }
        }
        assertThat(named).as("the check saw the paths the help names").contains("docker/conf/cluster.yaml");
    }

    /** Whether {@code path} (relative to the checkout; a {@code *} in its file name matches any text) exists. */
    private static boolean exists(final String path) throws IOException {
        final Path p = ROOT.resolve(path);
        if (!path.contains("*")) {
            return Files.exists(p);
        }
        final String glob = p.getFileName().toString();
        if (!Files.isDirectory(p.getParent())) {
            return false;
        }
        try (Stream<Path> files = Files.list(p.getParent())) {
            final Pattern name = Pattern.compile(Pattern.quote(glob).replace("*", "\\E.*\\Q"));
            return files.anyMatch(f -> name.matcher(f.getFileName().toString()).matches());
        }
    }

    @Test
    void shouldListEveryWorkloadProtocolAndRole() {
        final String bench = help("bench");
        for (final String workload : BenchCommand.WORKLOADS) {
            assertThat(bench).as("bench --help lists workload " + workload).containsPattern("\\b" + workload + "\\b");
        }
        assertThat(ProtocolRegistry.listedNames()).contains("scythe", "ford-occ", "farm-occ");
        for (final String protocol : ProtocolRegistry.listedNames()) {
            assertThat(bench).as("bench --help lists protocol " + protocol).contains(protocol);
            assertThat(help("sim")).as("sim --help lists protocol " + protocol).contains(protocol);
            assertThat(help("cluster")).as("cluster --help lists protocol " + protocol).contains(protocol);
        }
        final String node = help("node");
        for (final NodeRole role : NodeRole.values()) {
            assertThat(node).as("node --help lists role " + role.label()).containsPattern("\\b" + role.label() + "\\b");
        }
        assertThat(help("sim")).contains("smallbank, ycsb, tpcc, phantom, churn");
    }

    @Test
    void shouldListEveryCostModelProfileItAccepts() {
        final List<String> profiles = List.of(io.scythe.fabric.CostModel.PROFILE_NAMES.split(", | or "));
        assertThat(profiles).contains("cx5", "cx5-pcie", "cx5-queue", "cx5-table1", "zero");
        for (final String profile : profiles) {
            assertThat(io.scythe.fabric.CostModel.profile(profile)).as(profile).isNotNull();
            for (final String command : List.of("bench", "sim", "cluster", "fabric")) {
                assertThat(help(command)).as(command + " --help lists profile " + profile)
                    .containsPattern("\\b" + Pattern.quote(profile) + "\\b(?!-)");
            }
        }
    }
}
