package io.scythe.sim;

import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replication (k = 2 backups, 3 memory nodes) and one-sided index lookups, on every protocol: the explorer's
 * contended workloads (SmallBank's money, the phantom and churn inserts and deletes, TPC-C's inserts and deletes) with
 * redo records on, reclamation every 10 us and the serializability checker. Every invariant holds and, after each
 * run, every backup holds byte for byte what its primary holds.
 */
class ReplicationSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "scythe-occ", "ford-occ", "farm-occ"})
    void shouldLeaveEveryBackupIdenticalToItsPrimaryWithEveryProtocol(final String protocol) throws Exception {
        for (final Explorer.Workload workload : Explorer.Workload.swept()) {
            for (long seed = 1; seed <= 2; seed++) {
                final RemoteTable.LookupMode lookup = seed == 1 ? RemoteTable.LookupMode.ONE_SIDED
                    : RemoteTable.LookupMode.RPC;
                final SimOptions o = Explorer.options(protocol, seed).memoryNodes(3).replicas(2).lookup(lookup)
                    .redoLog(true).durationNs(400_000); // 200 us: ford-occ (no retries) committed no TPC-C
                final Explorer.Outcome outcome = Explorer.check(vertx, workload, o);
                final String what = workload + " " + protocol + " seed " + seed + " lookup " + lookup;
                assertThat(outcome.failure()).as(what).isNull();
                assertThat(outcome.committed()).as(what).isPositive();
                final JsonObject run = outcome.run();
                assertThat(run.getInteger("replica_differences")).as(what).isZero();
                assertThat(outcome.history().transactions()).as(what).isPositive();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldRunTheSameWithoutReplicasAsBefore(final String protocol) throws Exception {
        // Off by default: no backup tables, no comparison in the results.
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK,
            Explorer.options(protocol, 3));
        assertThat(outcome.failure()).isNull();
        assertThat(outcome.run().containsKey("replica_differences")).isFalse();
    }
}
