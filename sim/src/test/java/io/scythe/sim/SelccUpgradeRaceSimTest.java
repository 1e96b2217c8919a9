package io.scythe.sim;

import io.scythe.txn.selcc.LineCache;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The symmetric upgrade race of SELCC (two or more participants hold a hot line Shared and each upgrades it to
 * Exclusive, invalidating the others, who are busy upgrading too): transactions plain-read a hot counter and then write
 * it (no read for update), at 4 compute nodes of 4 loops. Without a tie-break every upgrader drops the others'
 * invalidations and none wins. The run must end quiescent, count every committed increment in memory, leave no latch
 * set, count at least 20 increments (warm-up, 200 us and drain), and must have taken the upgrade's fallback and the
 * tie-break's yield ({@code sim.paths_taken}).
 */
class SelccUpgradeRaceSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"selcc-2pl", "selcc-occ"})
    void shouldFinishEveryClientWhenHotKeysArePlainReadThenWritten(final String protocol) throws Exception {
        final SimOptions o = new SimOptions().protocol(protocol).computeNodes(4).loopsPerComputeNode(4)
            .clientsPerComputeNode(8).memoryNodes(2).durationNs(200_000).seed(1);
        final SimResult r = new Simulation(o, new AurogonSimTest.HotCounter(true)).run(vertx);
        final JsonObject run = r.run().toJson();
        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getJsonArray("violations")).as(sim.encode()).isEmpty();
        assertThat(sim.getBoolean("quiescent")).as("every client finished: " + run.encode()).isTrue();
        assertThat(sim.getInteger("unfinished_clients")).isZero();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(run.getJsonObject("conserved").encode())
            .isTrue();
        assertThat(run.getInteger("locks_left_held")).isZero();
        // One hot counter for 16 participants (90 % of the transactions): a handful of commits per 100 us at best;
        // before the tie-break the clients of 2-3 nodes never finished their first transaction.
        assertThat(run.getJsonObject("conserved").getLong("final")).as("increments in all: " + run.encode())
            .isGreaterThanOrEqualTo(20);
        // The race was run, not only survived: upgrades gave their Shared up and took the line anew (§4.3's fallback
        // after failed CASes, and the tie-break's yield to a lower participant).
        final JsonObject paths = sim.getJsonObject("paths_taken", new JsonObject());
        assertThat(paths.getLong(LineCache.UPGRADE_FALLBACK, 0L)).as("upgrade fallbacks: " + paths.encode())
            .isPositive();
        assertThat(paths.getLong(LineCache.UPGRADE_YIELDED, 0L)).as("upgrades yielded: " + paths.encode())
            .isPositive();
    }
}
