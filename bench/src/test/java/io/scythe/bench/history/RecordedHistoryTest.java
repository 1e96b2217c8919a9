package io.scythe.bench.history;

import io.scythe.bench.micro.OltpWorkload;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End to end: SmallBank on 20 accounts, 16 clients, with history recording. The unsafe protocol (no locks, no
 * validation) is reported non-serializable; scythe, ford-occ and farm-occ pass on the same workload, and their
 * histories hold every transaction that committed.
 */
class RecordedHistoryTest {
    @TempDir
    Path dir;

    @Test
    void shouldFindTheUnsafeProtocolOnlyByName() {
        assertThat(io.scythe.txn.spi.ProtocolRegistry.protocol("unsafe")).isSameAs(io.scythe.txn.spi.ProtocolRegistry.protocol("unsafe"));
        assertThat(io.scythe.txn.spi.ProtocolRegistry.listed()).doesNotContain(io.scythe.txn.spi.ProtocolRegistry.protocol("unsafe"));
    }

    @Test
    void shouldCatchTheUnsafeProtocolAndPassEveryRealOne() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<String> protocols = List.of("unsafe", "scythe", "ford-occ", "farm-occ");
        // Measured for 1.5 s (the warm-up would be recorded too): on a saturated machine a cold 400 ms run of the
        // first protocol committed a single transaction, too few for the unsafe one's cycle to show.
        // At least 200 commits a run (LongEnoughRun: longer again when the CPU was starved), each try its own directory.
        final Path[] runDir = new Path[1];
        final JsonObject json = io.scythe.bench.LongEnoughRun.run(200, 1_500, (durationMs, attempt) -> {
            runDir[0] = java.nio.file.Files.createDirectories(dir.resolve("try" + attempt));
            return new OltpWorkload(new OltpWorkload.Options(protocols, List.of(16), 2, 100_000, CostModel.cx5(),
                durationMs, 0, 5, runDir[0]), new SmallBankSpec(20, 0.99, "standard"), new PrintStream(printed))
                .run().toJson();
        });
        for (int i = 0; i < protocols.size(); i++) {
            final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
            final String protocol = protocols.get(i);
            final Path file = Path.of(run.getJsonObject("history").getString("file"));
            assertThat(file).isEqualTo(runDir[0].resolve(protocol + "-16.history"));
            final History history = HistoryReader.read(file);
            // Every committed transaction is in it (a procedure's own rollback commits nothing).
            assertThat((long) history.transactions()).as(protocol)
                .isEqualTo(run.getLong("committed") - run.getLong("user_rollbacks"))
                .isEqualTo(run.getJsonObject("history").getLong("transactions"));
            final SerializabilityChecker.Result result = SerializabilityChecker.check(history, 5);
            if (protocol.equals("unsafe")) {
                assertThat(result.serializable()).as(String.join("\n", result.lines())).isFalse();
                assertThat(result.components()).as("cycles found").isPositive();
            } else {
                assertThat(result.serializable()).as(protocol + "\n" + String.join("\n", result.lines()) + "\n"
                    + printed).isTrue();
                assertThat(result.edgesByKind()[2]).as("anti-dependencies: the run had contention").isPositive();
                assertThat(run.getBoolean("invariants_ok")).isTrue();
            }
        }
    }
}
