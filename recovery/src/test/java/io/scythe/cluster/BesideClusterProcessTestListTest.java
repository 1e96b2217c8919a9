package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classes the suite runs beside {@link ClusterProcessTest} (tests-beside-ClusterProcessTest.txt, pom.xml's
 * default-test) launch no node JVM: a cluster beside its paused-CN scenario starved a live CN out of the membership,
 * and a node launched there could write the node class archive before that class's first CN does (issue 23 §1).
 */
class BesideClusterProcessTestListTest {
    /** What a class that launches node JVMs uses (LocalCluster's launcher, the process tests' cluster factory). */
    private static final List<String> LAUNCHES_NODES = List.of("LocalCluster.Launcher", "ProcessClusters.counters",
        "new LocalCluster(", "ProcessClusters.startAndJoin");

    @Test
    void shouldListOnlyExistingClassesThatLaunchNoNodeJvm() throws Exception {
        final Path sources = Path.of("src/test/java/io/scythe/cluster");
        final List<String> listed = Files.readAllLines(Path.of("tests-beside-ClusterProcessTest.txt")).stream()
            .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        assertThat(listed).as("classes beside ClusterProcessTest").isNotEmpty()
            .allSatisfy(l -> assertThat(l).startsWith("**/").endsWith("Test.java").doesNotEndWith("ProcessTest.java"));
        for (final String line : listed) {
            final Path source = sources.resolve(line.substring("**/".length()));
            assertThat(source).as("listed %s", line).exists();
            final String text = Files.readString(source);
            assertThat(LAUNCHES_NODES).as("%s runs beside ClusterProcessTest: it must launch no node JVM", line)
                .noneMatch(text::contains);
        }
    }
}
