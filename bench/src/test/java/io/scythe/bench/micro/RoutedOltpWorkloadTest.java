package io.scythe.bench.micro;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.fabric.CostModel;
import io.scythe.routing.RoutingMode;
import io.scythe.routing.ShardMap;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.spi.ObjectProbe;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Several compute nodes in the embedded benchmark, routed: every committed Bump of a key is counted in the key's own
 * counter, so the counters say exactly how many commits each shard had, and the map says whose they should be.
 */
class RoutedOltpWorkloadTest {
    private static final int KEYS = 64;
    private static final int SHARDS = 8;
    private static final List<String> NODES = List.of("cn", "cn1", "cn2", "cn3");

    /**
     * Counters 0..63. Bump (read-write, 3 in 4) adds 1 to a key drawn from all; Peek (read-only) reads a multiple of 4,
     * whose shard (0 or 4 of 8) is cn's with 4 nodes. {@link #total} keeps the counters it saw last.
     */
    static final class Counters implements OltpSpec {
        final long[] counts = new long[KEYS];

        @Override
        public String name() {
            return "counters";
        }

        @Override
        public String quantity() {
            return "bumps";
        }

        @Override
        public JsonObject params() {
            return new JsonObject().put("keys", KEYS);
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            final Table t = db.create(TableSchema.fixed(1, "counters", 8, KEYS));
            for (long k = part; k < KEYS; k += parts) {
                t.insert(k, new UnsafeBuffer(new byte[8]), 0, 8, ObjectLayout.LOADED_VERSION);
            }
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            if (random.nextInt(4) == 0) {
                final long key = 4L * random.nextInt(KEYS / 4);
                return new Drawn("Peek", txn -> txn.read("counters", key).map(v -> 0L), key, true);
            }
            final long key = random.nextInt(KEYS);
            return new Drawn("Bump", txn -> txn.readForUpdate("counters", key).map(v -> {
                final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                next.putLong(0, v.getLong(0) + 1);
                txn.write("counters", key, next, 0, 8);
                return 1L;
            }), key, false);
        }

        @Override
        public long total(final List<LogDb> dbs) {
            long sum = 0;
            for (long k = 0; k < KEYS; k++) {
                counts[(int) k] = ObjectProbe.committedLong(dbs.get((int) (k % dbs.size())).table("counters"), k);
                sum += counts[(int) k];
            }
            return sum;
        }
    }

    private static JsonObject run(final Counters spec, final RoutingMode routing, final List<Integer> cns,
                                  final ByteArrayOutputStream printed) throws Exception {
        // No warm-up: the counters then hold the measured run's commits only.
        return new OltpWorkload(new OltpWorkload.Options(List.of("ford-occ"), List.of(8), 2, 100_000, CostModel.cx5(),
            400, 0, 5), spec, new PrintStream(printed)).computeNodes(cns).routing(routing).shards(SHARDS).run()
            .toJson();
    }

    /** Commits of Bump each node should have run: its shards' counters. */
    private static long[] bumpsOfOwners(final Counters spec) {
        final ShardMap map = ShardMap.roundRobin(SHARDS, NODES);
        final long[] expected = new long[NODES.size()];
        for (int k = 0; k < KEYS; k++) {
            expected[map.ownerOfKey(k)] += spec.counts[k];
        }
        return expected;
    }

    /**
     * How far from n/4 one node's share of {@code n} uniform choices among 4 may fall: five standard deviations, plus
     * one for the rounding (a short run on a loaded machine may commit a few dozen only).
     */
    private static long uniformSlack(final long n) {
        return (long) Math.ceil(5 * Math.sqrt(n * 3.0 / 16)) + 1;
    }

    private static long[] longs(final JsonArray array) {
        final long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.getLong(i);
        }
        return out;
    }

    @Test
    void shouldRunEveryTransactionOfAShardOnItsOwnerBesideOneComputeNode() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final Counters spec = new Counters();
        final JsonObject json = run(spec, RoutingMode.SHARD, List.of(1, 4), printed);
        assertThat(json.getJsonObject("params").getString("routing")).isEqualTo("shard");
        assertThat(json.getJsonObject("params").getJsonArray("cns")).containsExactly(1, 4);
        final JsonObject one = json.getJsonArray("runs").getJsonObject(0);
        final JsonObject four = json.getJsonArray("runs").getJsonObject(1);
        assertThat(one.getString("protocol")).isEqualTo("ford-occ/cns1");
        assertThat(one.getJsonArray("committed_by_cn")).containsExactly(one.getLong("committed"));
        assertThat(four.getString("protocol")).isEqualTo("ford-occ/cns4");
        assertThat(four.getInteger("cns")).isEqualTo(4);
        assertThat(four.getDouble("ratio_over_cns_1")).isPositive();
        assertThat(four.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
        final long[] byCn = longs(four.getJsonArray("committed_by_cn"));
        final long[] bumps = bumpsOfOwners(spec);
        final long peeks = four.getJsonObject("committed_by_type").getLong("Peek");
        assertThat(peeks).isPositive();
        // Every Bump ran on its key's owner, and every Peek (all cn's keys) on cn.
        assertThat(byCn).containsExactly(bumps[0] + peeks, bumps[1], bumps[2], bumps[3]);
        assertThat(bumps[1]).isPositive();
        assertThat(four.getLong("rerouted")).isZero();
    }

    @Test
    void shouldSendReadOnlyTransactionsAnywhereWhenHybridAndEverythingAnywhereWhenRandom() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final Counters hybridSpec = new Counters();
        final JsonObject hybrid = run(hybridSpec, RoutingMode.HYBRID, List.of(4), printed).getJsonArray("runs")
            .getJsonObject(0);
        assertThat(hybrid.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
        final long[] byCn = longs(hybrid.getJsonArray("committed_by_cn"));
        final long[] bumps = bumpsOfOwners(hybridSpec);
        final long peeks = hybrid.getJsonObject("committed_by_type").getLong("Peek");
        long peeksCounted = 0;
        for (int cn = 0; cn < 4; cn++) {
            // Read-write ones by shard: what a node ran beyond its shards' Bumps are Peeks, spread over every node
            // (all of them are cn's keys).
            assertThat(byCn[cn] - bumps[cn]).as("Peeks on node " + cn + " " + hybrid.encode())
                .isNotNegative().isCloseTo(peeks / 4, within(uniformSlack(peeks)));
            peeksCounted += byCn[cn] - bumps[cn];
        }
        assertThat(peeksCounted).isEqualTo(peeks);
        assertThat(peeks).isPositive();

        final Counters randomSpec = new Counters();
        final JsonObject random = run(randomSpec, RoutingMode.RANDOM, List.of(4), printed).getJsonArray("runs")
            .getJsonObject(0);
        final long[] spread = longs(random.getJsonArray("committed_by_cn"));
        final long committed = random.getLong("committed");
        assertThat(spread[0] + spread[1] + spread[2] + spread[3]).isEqualTo(committed);
        for (int cn = 0; cn < 4; cn++) {
            assertThat(spread[cn]).as("node " + cn + " of " + committed).isCloseTo(committed / 4,
                within(uniformSlack(committed)));
        }
        assertThat(spread).as("not by owner").isNotEqualTo(new long[] {bumpsOfOwners(randomSpec)[0]
            + random.getJsonObject("committed_by_type").getLong("Peek"), bumpsOfOwners(randomSpec)[1],
            bumpsOfOwners(randomSpec)[2], bumpsOfOwners(randomSpec)[3]});
    }

    @Test
    void shouldSendAgainWhatANodeRefusedAfterItsShardMovedAndLoseNothing() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = new OltpWorkload(new OltpWorkload.Options(List.of("scythe"), List.of(8), 2, 100_000,
            CostModel.cx5(), 500, 0, 7), new Counters(), new PrintStream(printed)).computeNodes(List.of(4))
            .routing(RoutingMode.SHARD).shards(1).moveShardEvery(5).run().toJson();
        final JsonObject run = json.getJsonArray("runs").getJsonObject(0);
        assertThat(run.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        assertThat(run.getLong("shards_moved")).as(run.encode()).isPositive();
        assertThat(run.getLong("shard_map_epoch")).isEqualTo(ShardMap.FIRST_EPOCH + run.getLong("shards_moved"));
        // One shard, moved before the first measured transaction and then every 5 ms: each loop's router first routes
        // on a stale map, is refused, and sends again; none failed for it.
        assertThat(run.getLong("rerouted")).as(run.encode()).isPositive();
        assertThat(run.getLong("gave_up", 0L)).isZero();
        final long[] byCn = longs(run.getJsonArray("committed_by_cn"));
        assertThat(byCn[0] + byCn[1] + byCn[2] + byCn[3]).isEqualTo(run.getLong("committed"));
        assertThat(printed.toString()).contains("rerouted");
    }

    /** SmallBank on four routed compute nodes, briefly, under every listed protocol: money conserved, no lock left. */
    @Test
    void shouldConserveMoneyOnFourComputeNodesUnderEveryProtocol() throws Exception {
        final List<String> protocols = io.scythe.txn.spi.ProtocolRegistry.listedNames();
        assertThat(protocols).contains("scythe", "scythe-occ", "ford-occ", "farm-occ");
        // Summed over the runs: a loaded machine may leave a short run with a handful of commits.
        final long[] everyRun = new long[4];
        for (final RoutingMode routing : List.of(RoutingMode.SHARD, RoutingMode.HYBRID)) {
            final ByteArrayOutputStream printed = new ByteArrayOutputStream();
            final JsonObject json = new OltpWorkload(new OltpWorkload.Options(protocols, List.of(8), 2, 100_000,
                CostModel.cx5(), 250, 0, 11), new io.scythe.bench.workload.SmallBankSpec(1_000, 0.99, "standard"),
                new PrintStream(printed)).computeNodes(List.of(4)).routing(routing).run().toJson();
            assertThat(json.getJsonArray("runs")).hasSize(protocols.size());
            for (int i = 0; i < protocols.size(); i++) {
                final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
                final String what = routing.label() + " " + run.getString("protocol") + ": " + run.encode();
                assertThat(run.getString("protocol")).isEqualTo(protocols.get(i));
                assertThat(run.getBoolean("invariants_ok")).as(what + printed).isTrue();
                final JsonObject conserved = run.getJsonObject("conserved");
                assertThat(conserved.getBoolean("ok")).as(what).isTrue();
                assertThat(conserved.getLong("final")).as(what)
                    .isEqualTo(conserved.getLong("initial") + conserved.getLong("committed_delta"));
                assertThat(run.getLong("locks_left_held")).as(what).isZero();
                assertThat(run.getInteger("cns")).isEqualTo(4);
                final long[] byCn = longs(run.getJsonArray("committed_by_cn"));
                assertThat(run.getLong("committed")).as(what).isPositive();
                assertThat(byCn[0] + byCn[1] + byCn[2] + byCn[3]).as(what).isEqualTo(run.getLong("committed"));
                for (int cn = 0; cn < 4; cn++) {
                    everyRun[cn] += byCn[cn];
                }
            }
        }
        for (int cn = 0; cn < 4; cn++) {
            assertThat(everyRun[cn]).as("commits on node " + cn).isPositive();
        }
    }
}
