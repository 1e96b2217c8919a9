package io.scythe.txn;

import io.scythe.txn.scythe.ScytheTxn;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Fault points: parsed strictly, armed only when the JVM allows it, and firing once, only where asked. */
class FaultPointsTest {
    private OneMemoryNode node;

    @AfterEach
    void disarm() throws Exception {
        FaultPoints.clear();
        System.clearProperty(FaultPoints.ENABLE_PROPERTY);
        if (node != null) {
            node.close();
        }
    }

    private static JsonObject fault(final String at, final String action) {
        return new JsonObject().put("procedure", "p").put("key", 5).put("at", at).put("action", action);
    }

    private static void arm(final JsonObject... faults) {
        System.setProperty(FaultPoints.ENABLE_PROPERTY, "true");
        FaultPoints.arm(FaultPoints.Fault.list(new JsonArray(List.of((Object[]) faults))));
    }

    private static final Function<Txn, Future<Long>> BODY = txn -> Future.succeededFuture(7L);

    @Test
    void shouldRefuseBadFaultsWithAClearMessage() {
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "hold").put("when", 1)))
            .hasMessageContaining("unknown keys [when]");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("midway", "hold")))
            .hasMessageContaining("at must be afterExecute, beforeRedo or afterRedo");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "explode")))
            .hasMessageContaining("action must be halt, hold, delay or await");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "await").put("ms", 10)))
            .hasMessageContaining("file (a path) goes with, and only with, action await");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "await").put("file", "/x")))
            .hasMessageContaining("ms (1 to 86400000)");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "hold").put("file", "/x")))
            .hasMessageContaining("file (a path) goes with, and only with, action await");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "delay")))
            .hasMessageContaining("ms (1 to 86400000)");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "hold").put("ms", 10)))
            .hasMessageContaining("ms (1 to 86400000)");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "await").put("file", "/x")
            .put("ms", Long.MAX_VALUE / 1000))).as("a bound whose nanoseconds overflow").hasMessageContaining(
            "ms (1 to 86400000)");
        assertThatThrownBy(() -> FaultPoints.Fault.of(fault("beforeRedo", "hold").put("procedure", "")))
            .hasMessageContaining("procedure must be set");
        assertThatThrownBy(() -> FaultPoints.Fault.list(new JsonArray().add("halt")))
            .hasMessageContaining("a list of objects");
        assertThat(FaultPoints.Fault.of(fault("afterRedo", "HALT")))
            .isEqualTo(new FaultPoints.Fault("p", 5L, FaultPoints.Point.AFTER_REDO, FaultPoints.Action.HALT, 0));
    }

    @Test
    void shouldRefuseToArmInAJvmThatDoesNotAllowFaults() {
        final List<FaultPoints.Fault> faults = List.of(FaultPoints.Fault.of(fault("afterRedo", "halt")));
        assertThatThrownBy(() -> FaultPoints.arm(faults)).hasMessageContaining("-D" + FaultPoints.ENABLE_PROPERTY);
        // Nothing armed: bodies are left as they are.
        assertThat(FaultPoints.wrap("p", new long[] {5}, BODY)).isSameAs(BODY);
        assertThat(FaultPoints.reached(FaultPoints.Point.AFTER_REDO, 1).succeeded()).isTrue();
    }

    @Test
    void shouldHoldOnlyTheNextAttemptOfTheMatchingProcedureAndKey() throws Exception {
        node = new OneMemoryNode("t", 64);
        arm(fault("afterExecute", "hold"));
        final Future<Long> otherKey = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("p", new long[] {6}, BODY).apply(new ScytheTxn(r, false))));
        final Future<Long> otherProcedure = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("q", new long[] {5}, BODY).apply(new ScytheTxn(r, false))));
        final Future<Long> held = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("p", new long[] {5}, BODY).apply(new ScytheTxn(r, false))));
        final Future<Long> next = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("p", new long[] {5}, BODY).apply(new ScytheTxn(r, false))));
        assertThat(otherKey.result()).isEqualTo(7);
        assertThat(otherProcedure.result()).isEqualTo(7);
        assertThat(next.result()).as("fired once").isEqualTo(7);
        Thread.sleep(200);
        assertThat(held.isComplete()).isFalse();
    }

    @Test
    void shouldHoldAnAwaitFaultUntilItsFileExistsAndFailItLoudlyPastItsBound(@TempDir final Path dir)
        throws Exception {
        node = new OneMemoryNode("t", 64);
        final Path release = dir.resolve("release");
        arm(fault("afterExecute", "await").put("file", release.toString()).put("ms", 30_000),
            new JsonObject().put("procedure", "q").put("at", "afterExecute").put("action", "await")
                .put("file", dir.resolve("never").toString()).put("ms", 300));
        final Future<Long> held = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("p", new long[] {5}, BODY).apply(new ScytheTxn(r, false))));
        final Future<Long> bounded = node.on(r -> Future.succeededFuture(
            FaultPoints.wrap("q", new long[] {5}, BODY).apply(new ScytheTxn(r, false))));
        assertThatThrownBy(() -> bounded.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS))
            .as("failed past its bound").hasMessageContaining("await " + dir.resolve("never") + " not released within "
            + "300 ms");
        assertThat(held.isComplete()).as("held while its file is absent").isFalse();
        assertThat(bounded.cause()).hasMessageContaining("await " + dir.resolve("never") + " not released within "
            + "300 ms");
        Files.createFile(release);
        assertThat(held.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS)).as("released")
            .isEqualTo(7);
    }

    @Test
    void shouldDelayAfterExecuting() throws Exception {
        node = new OneMemoryNode("t", 64);
        arm(fault("afterExecute", "delay").put("ms", 300));
        final long start = System.nanoTime();
        final long result = node.on(r -> FaultPoints.wrap("p", new long[] {5}, BODY).apply(new ScytheTxn(r, false)));
        assertThat(result).isEqualTo(7);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(300_000_000L);
    }

    @Test
    void shouldFireARedoPointOnlyInATransactionOfItsProcedureAndOnlyOnce() throws Exception {
        node = new OneMemoryNode("t", 64);
        arm(fault("beforeRedo", "hold"));
        final long[] ids = node.on(r -> {
            final ScytheTxn other = new ScytheTxn(r, false);
            final ScytheTxn marked = new ScytheTxn(r, false);
            final ScytheTxn later = new ScytheTxn(r, false);
            FaultPoints.wrap("q", new long[] {5}, BODY).apply(other);
            FaultPoints.wrap("p", new long[] {5}, BODY).apply(marked);
            FaultPoints.wrap("p", new long[] {5}, BODY).apply(later); // a retry: marked too, until one fires
            return Future.succeededFuture(new long[] {other.id(), marked.id(), later.id()});
        });
        assertThat(FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, ids[0]).succeeded()).isTrue();
        assertThat(FaultPoints.reached(FaultPoints.Point.AFTER_REDO, ids[1]).succeeded()).as("another point")
            .isTrue();
        assertThat(FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, ids[1]).isComplete()).as("held").isFalse();
        assertThat(FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, ids[2]).succeeded()).as("fired once")
            .isTrue();
    }
}
