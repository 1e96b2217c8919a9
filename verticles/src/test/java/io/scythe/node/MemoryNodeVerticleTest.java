package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemoryNodeVerticleTest {
    private Vertx vertx;
    private LocalFabric fabric;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }

    private JsonObject config(final JsonArray regions) {
        return new JsonObject().put("node", "mn0").put("regions", regions);
    }

    @Test
    void shouldRegisterRegionsAndServeWhereTheyAreSoThatACnCanWriteThem() throws Exception {
        final MemoryNodeVerticle mn = new MemoryNodeVerticle(fabric);
        vertx.deployVerticle(mn, new DeploymentOptions().setConfig(config(new JsonArray()
            .add(new JsonObject().put("name", "data").put("bytes", 4096))
            .add(new JsonObject().put("name", "tso").put("bytes", 64).put("kind", "device")))))
            .await(10, TimeUnit.SECONDS);
        final RegionDirectoryClient client = new RegionDirectoryClient(vertx);
        final RemoteRegion data = client.lookup("mn0", "data").await(10, TimeUnit.SECONDS);
        assertThat(data.length()).isEqualTo(4096);
        assertThat(data.rkey()).isEqualTo(mn.regions().get("data").rkey());
        assertThat(client.all("mn0").await(10, TimeUnit.SECONDS)).extracting(RemoteRegion::kind)
            .containsExactlyInAnyOrder(MemoryKind.HOST, MemoryKind.DEVICE);
        // The looked-up address and rkey work for a one-sided WRITE from a compute node.
        fabric.attachNow("cn0");
        final Promise<Void> written = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> RdmaChannel.connect(fabric.nic("cn0"), "mn0", new QpOptions())
            .compose(ch -> {
                final UnsafeBuffer src = new UnsafeBuffer(new byte[8]);
                src.putLong(0, 77);
                return ch.write(data, 8, src, 0, 8);
            }).onComplete(written));
        written.future().await(10, TimeUnit.SECONDS);
        assertThat(mn.regions().get("data").buffer().getLongVolatile(8)).isEqualTo(77);
    }

    @Test
    void shouldAnswerAnUnknownRegionWithAClearErrorAndKeepServing() throws Exception {
        vertx.deployVerticle(new MemoryNodeVerticle(fabric), new DeploymentOptions().setConfig(config(
            new JsonArray().add(new JsonObject().put("name", "data").put("bytes", 64))))).await(10, TimeUnit.SECONDS);
        final RegionDirectoryClient client = new RegionDirectoryClient(vertx);
        assertThatThrownBy(() -> client.lookup("mn0", "nope").await(10, TimeUnit.SECONDS))
            .isInstanceOf(ReplyException.class).hasMessageContaining("unknown region 'nope'")
            .hasMessageContaining("[data]");
        final Throwable wrongType = vertx.eventBus().request(MemoryNodeVerticle.metadataAddress("mn0"), "hello")
            .transform(ar -> io.vertx.core.Future.succeededFuture(ar.cause())).await(10, TimeUnit.SECONDS);
        assertThat(wrongType).hasMessageContaining("expected a RegionLookup");
        assertThat(client.lookup("mn0", "data").await(10, TimeUnit.SECONDS).length()).isEqualTo(64);
    }

    @Test
    void shouldRefuseABadConfigWithoutRegisteringAnything() {
        for (final JsonObject bad : new JsonObject[] {
            config(new JsonArray().add(new JsonObject().put("name", "a").put("bytes", -1))),
            config(new JsonArray().add(new JsonObject().put("name", "a").put("bytes", 8).put("kind", "GPU"))),
            config(new JsonArray().add(new JsonObject().put("name", "a").put("bytes", 8))
                .add(new JsonObject().put("name", "a").put("bytes", 8))),
            config(new JsonArray()).put("color", "red"),
            new JsonObject().put("regions", new JsonArray())}) {
            assertThatThrownBy(() -> vertx.deployVerticle(new MemoryNodeVerticle(fabric),
                new DeploymentOptions().setConfig(bad)).await(10, TimeUnit.SECONDS))
                .hasMessageContaining("memory node config");
        }
        assertThat(fabric.nic("mn0")).isNull();
    }

    @Test
    void shouldDeregisterItsRegionsWhenUndeployed() throws Exception {
        final MemoryNodeVerticle mn = new MemoryNodeVerticle(fabric);
        final String id = vertx.deployVerticle(mn, new DeploymentOptions().setConfig(config(new JsonArray()
            .add(new JsonObject().put("name", "data").put("bytes", 64))))).await(10, TimeUnit.SECONDS);
        final var region = mn.regions().get("data");
        vertx.undeploy(id).await(10, TimeUnit.SECONDS);
        assertThat(region.isRegistered()).isFalse();
        assertThat(fabric.nic("mn0")).isNull();
    }
}
