package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * scythe-client is what an application depends on: it must not pull the server (transactions, storage, fabric,
 * nodes, simulator, benchmarks). Checked three ways, so a new dependency fails here whichever way it comes in: the
 * pom names only the allowed dependencies; the classpath Maven resolved for this test (compile, runtime and test
 * scope) holds no other Scythe module; and no class of a server module can be loaded.
 */
class ClientDependenciesTest {
    /** The Scythe modules a client may have on its classpath: itself and the event-bus codecs. */
    private static final Set<String> ALLOWED_SCYTHE = Set.of("client", "eventbus-codecs", "scythe-client",
        "scythe-eventbus-codecs");
    /** Scythe's module folders (as the reactor puts them on the classpath: FOLDER/target/classes). */
    private static final Set<String> SCYTHE_MODULES = Set.of("rdma-bridge", "eventbus-codecs", "client", "storage",
        "hotspot", "txn", "verticles", "recovery", "bench", "sim", "cli");

    @Test
    void shouldDeclareOnlyTheCodecsVertxAndHazelcast() throws Exception {
        final String pom = Files.readString(Path.of("pom.xml"));
        final String dependencies = pom.substring(pom.indexOf("<dependencies>"), pom.indexOf("</dependencies>"));
        final List<String> artifacts = new ArrayList<>();
        final Matcher m = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(dependencies);
        while (m.find()) {
            artifacts.add(m.group(1));
        }
        assertThat(artifacts).as("scythe-client's dependencies (client/pom.xml)")
            .containsExactlyInAnyOrder("scythe-eventbus-codecs", "vertx-core", "vertx-hazelcast");
    }

    @Test
    void shouldResolveNoServerModule() {
        final Set<String> scythe = new TreeSet<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            final Path p = Path.of(entry);
            final String name = p.getFileName().toString();
            if (name.startsWith("scythe-") && name.endsWith(".jar")) {
                scythe.add(name.replaceAll("-\\d.*\\.jar$", ""));
            } else if ((name.equals("classes") || name.equals("test-classes")) && p.getParent() != null
                && p.getParent().getParent() != null) {
                final String module = p.getParent().getParent().getFileName().toString();
                if (SCYTHE_MODULES.contains(module)) {
                    scythe.add(module);
                }
            }
        }
        assertThat(scythe).as("Scythe modules on scythe-client's test classpath").isNotEmpty()
            .isSubsetOf(ALLOWED_SCYTHE);
    }

    @Test
    void shouldLoadNoServerClass() {
        for (final String server : List.of("io.scythe.txn.Txn", "io.scythe.txn.Coordinator",
            "io.scythe.storage.LogDb", "io.scythe.fabric.Fabric", "io.scythe.bridge.BridgeVerticle",
            "io.scythe.node.CoordinatorVerticle", "io.scythe.node.EmbeddedScythe", "io.scythe.cluster.ScytheNode",
            "io.scythe.cluster.NodeConfig", "io.scythe.sim.Simulation", "org.agrona.DirectBuffer")) {
            assertThatThrownBy(() -> Class.forName(server, false, getClass().getClassLoader())).as(server)
                .isInstanceOf(ClassNotFoundException.class);
        }
    }
}
