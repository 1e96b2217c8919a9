package io.scythe.sim;

import io.scythe.bench.micro.OltpWorkload;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.CostModel;
import io.scythe.node.EmbeddedScythe;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.mn.MemoryNodeServices;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The protocol seam: a module that only this module's tests register ({@link PlantedPhantomModule}, one line in a
 * service file, no shared class naming it) is found by the registry, run by the simulator and the benchmark by its
 * name, and its memory-node service is started on every memory node of the embedded cluster.
 */
class ProtocolSeamTest extends SimVertxTest {
    @Test
    void shouldFindATestModuleInTheRegistryButNotInTheDefaultList() {
        assertThat(ProtocolRegistry.protocol("planted-phantom")).isSameAs(PlantedPhantomModule.PLANTED_PHANTOM);
        assertThat(ProtocolRegistry.moduleOf("planted-phantom")).isInstanceOf(PlantedPhantomModule.class);
        assertThat(ProtocolRegistry.listedNames()).containsExactly("scythe", "scythe-occ", "ford-occ", "farm-occ");
        assertThat(ProtocolRegistry.unlistedNames()).contains("unsafe", "planted-phantom");
        assertThatThrownBy(() -> ProtocolRegistry.protocol("no-such")).isInstanceOf(UnknownKeyException.class)
            .hasMessageContaining("'no-such'").hasMessageContaining("planted-phantom");
    }

    @Test
    void shouldRunTheTestModuleInTheSimulatorByName() throws Exception {
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK,
            Explorer.options("planted-phantom", 3));
        assertThat(outcome.committed()).as("committed under the test module").isPositive();
        assertThat(outcome.failure()).as("SmallBank inserts nothing: the planted bug cannot show").isNull();
        assertThat(outcome.run().getString("protocol")).isEqualTo("planted-phantom");
    }

    @Test
    void shouldRunTheTestModuleInTheBenchmarkAndStartItsMemoryNodeService() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject run = new OltpWorkload(new OltpWorkload.Options(List.of("planted-phantom"), List.of(4), 2,
            100_000, CostModel.cx5(), 300, 0, 5), new SmallBankSpec(50, 0.9, "standard"), new PrintStream(printed))
            .run().toJson().getJsonArray("runs").getJsonObject(0);
        assertThat(run.getString("protocol")).isEqualTo("planted-phantom");
        assertThat(run.getLong("committed")).as(printed.toString()).isPositive();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        assertThat(run.getLong("locks_left_held")).isZero();

        final Vertx real = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        try {
            BridgeVerticle.deployOnEveryEventLoop(real, new JsonObject()).await(10, TimeUnit.SECONDS);
            try (EmbeddedScythe cluster = EmbeddedScythe.deploy(real, new JsonObject()
                .put("protocol", "planted-phantom").put("memoryNodes", 2), new SmallBankSpec(50, 0.9, "standard")::load,
                new Procedures())) {
                final List<String> marked = cluster.memoryNodeServices().stream()
                    .map(n -> n.service(PlantedPhantomModule.NodeMark.class).node()).toList();
                assertThat(marked).containsExactly("mn0", "mn1");
                assertThat(cluster.coordinators()).allSatisfy(c -> assertThat(c.protocol().name())
                    .isEqualTo("planted-phantom"));
                final MemoryNodeServices node = cluster.memoryNodeServices().get(0);
                assertThatThrownBy(() -> node.service(String.class)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("String");
            }
        } finally {
            real.close().await(10, TimeUnit.SECONDS);
        }
    }
}
