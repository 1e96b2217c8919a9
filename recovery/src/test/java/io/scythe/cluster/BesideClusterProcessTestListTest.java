package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classes the suite runs beside {@link ClusterProcessTest} (tests-beside-ClusterProcessTest.txt, pom.xml's
 * default-test) start no Hazelcast member, no node and no clustered Vert.x: a live CN of its paused-CN scenario was
 * starved out of the membership with other members beside it (a first try with the heavy unit classes beside it, load
 * ~40), and a node JVM launched there could write the node class archive before that class's first CN does (issue 23
 * §1).
 */
class BesideClusterProcessTestListTest {
    /**
     * What a class that starts members uses: node JVMs (LocalCluster's launcher, the process tests' cluster factory),
     * nodes in its own JVM (ScytheNode.start), Hazelcast members, a clustered Vert.x, a client joining a cluster.
     */
    private static final List<String> STARTS_MEMBERS = List.of("LocalCluster.Launcher", "ProcessClusters.counters",
        "new LocalCluster(", "ProcessClusters.startAndJoin", "Node.start(", "newHazelcastInstance", "clusteredVertx",
        "ScytheClient.join");

    @Test
    void shouldListOnlyExistingClassesThatStartNoMember() throws Exception {
        final Path sources = Path.of("src/test/java/io/scythe/cluster");
        final List<String> listed = Files.readAllLines(Path.of("tests-beside-ClusterProcessTest.txt")).stream()
            .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        assertThat(listed).as("classes beside ClusterProcessTest").isNotEmpty()
            .allSatisfy(l -> assertThat(l).startsWith("**/").endsWith("Test.java").doesNotEndWith("ProcessTest.java"));
        for (final String line : listed) {
            final Path source = sources.resolve(line.substring("**/".length()));
            assertThat(source).as("listed %s", line).exists();
            final String text = Files.readString(source);
            assertThat(STARTS_MEMBERS).as("%s runs beside ClusterProcessTest: it must start no member", line)
                .noneMatch(text::contains);
        }
    }
}
