package io.scythe.bench.micro;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.fabric.CostModel;
import io.scythe.storage.LogDb;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A protocol that fails every transaction with an error (not an abort: e.g. it needs CN peers the cluster lacks) is
 * reported as an error row that fails the run, never as a quiet 0 txn/s.
 */
class FailingProtocolWorkloadTest {
    /** Every transaction fails with an error, as a protocol missing a piece of the cluster does. */
    static final class Failing implements OltpSpec {
        @Override
        public String name() {
            return "failing";
        }

        @Override
        public String quantity() {
            return "nothing";
        }

        @Override
        public JsonObject params() {
            return new JsonObject();
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            return new Drawn("Fail", txn -> Future.failedFuture(new UnsupportedOperationException(
                "this protocol needs CN-to-CN messaging")));
        }

        @Override
        public long total(final List<LogDb> dbs) {
            return 0;
        }
    }

    @Test
    void shouldFailTheRunNamingTheErrorInsteadOfPrintingZeroThroughput() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject run = new OltpWorkload(new OltpWorkload.Options(List.of("ford-occ"), List.of(2), 1, 100_000,
            CostModel.cx5(), 100, 50, 3), new Failing(), new PrintStream(printed)).run().toJson()
            .getJsonArray("runs").getJsonObject(0);
        assertThat(run.getBoolean("invariants_ok")).isFalse();
        assertThat(run.getLong("errors")).isPositive();
        assertThat(run.getString("first_error"))
            .isEqualTo("UnsupportedOperationException: this protocol needs CN-to-CN messaging");
        assertThat(printed.toString()).contains("ford-occ", "ERROR: ford-occ failed",
            "this protocol needs CN-to-CN messaging").doesNotContain("txn/s");
    }
}
