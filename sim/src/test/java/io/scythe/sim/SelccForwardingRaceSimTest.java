package io.scythe.sim;

import io.scythe.txn.selcc.LineCache;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's forwarding by one-sided WRITE (§4.4.1) under its races (issue 21): a holder WRITEs its copy into the
 * requester's registered receive slot, in parallel with the handover FAA, and answers once both landed; the requester
 * takes it from the slot (its ticket checked), with no memory-node READ. Tiny caches and short leases make lines
 * leave by eviction and lease while invalidations for them are in flight (a line forwarded while being evicted: the
 * message finds it gone, "not held"), busy frames drop crossing invalidations (two lines wanted each by the other's
 * holder), and one receive slot per loop makes a second concurrent requester on a loop go without one (its copy rides
 * in the reply). Each run must keep every invariant: no latch word left set, money or increments conserved (no write
 * lost), every committed history serializable (no stale read), and the counted paths must have run.
 */
class SelccForwardingRaceSimTest extends SimVertxTest {
    @AfterEach
    void defaults() {
        for (final String p : List.of("cacheFrames", "evictBatch", "leaseNs", "receiveSlots")) {
            System.clearProperty("scythe.selcc." + p);
        }
        LineCache.countCauses(false);
    }

    private static void racy() {
        LineCache.countCauses(true);
        System.setProperty("scythe.selcc.cacheFrames", "2");
        System.setProperty("scythe.selcc.evictBatch", "1");
        System.setProperty("scythe.selcc.leaseNs", "20000");
        System.setProperty("scythe.selcc.receiveSlots", "1");
    }

    @Test
    void shouldLoseNoIncrementWhenHotLinesAreForwardedBetweenComputeNodes() throws Exception {
        racy();
        final SimOptions o = new SimOptions().protocol("selcc-2pl").computeNodes(3).loopsPerComputeNode(2)
            .clientsPerComputeNode(6).memoryNodes(2).durationNs(150_000).seed(3);
        final JsonObject run = new Simulation(o, new AurogonSimTest.HotCounter()).run(vertx).run().toJson();
        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getJsonArray("violations")).as(sim.encode()).isEmpty();
        assertThat(sim.getBoolean("quiescent")).as(run.encode()).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(run.getJsonObject("conserved").encode())
            .isTrue();
        assertThat(run.getJsonObject("conserved").getLong("final")).as(run.encode()).isPositive();
        assertThat(run.getInteger("locks_left_held")).isZero();
        assertForwardingRaced();
    }

    @Test
    void shouldKeepEveryHistorySerializableWhileForwardingRaces() throws Exception {
        racy();
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.SMALLBANK,
            List.of("selcc-2pl"), 1, 4, (protocol, seed) -> Explorer.options(protocol, seed).computeNodes(2)
                .clientsPerComputeNode(4), new PrintStream(printed, true));
        assertThat(failures).as(printed.toString()).isEmpty();
        assertForwardingRaced();
    }

    private static void assertForwardingRaced() {
        assertThat(LineCache.counted("forwarded by one-sided WRITE into a receive slot"))
            .as("copies WRITten into receive slots").isPositive();
        assertThat(LineCache.counted("forwarded in the reply: no receive slot"))
            .as("a second requester on a loop with its only slot taken").isPositive();
        assertThat(LineCache.counted("rpc kind 2 answer 0") + LineCache.counted("rpc kind 1 answer 0"))
            .as("invalidations that found the line gone (evicted, lease, handed on)").isPositive();
        assertThat(LineCache.counted("drop kind 2 busy") + LineCache.counted("drop kind 1 busy"))
            .as("crossing invalidations dropped by a frame busy with its own step").isPositive();
    }
}
