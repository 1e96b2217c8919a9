package io.scythe.bench.history;

import io.scythe.bench.history.SerializabilityChecker.EdgeKind;
import io.scythe.bench.history.SerializabilityChecker.Result;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker on hand-made histories: each classic anomaly is found and named; a serial history passes. */
class SerializabilityCheckerTest {
    private static Result check(final History.Builder b) {
        return SerializabilityChecker.check(b.build(), 10);
    }

    @Test
    void shouldFindALostUpdateAsAnAntiDependencyCycle() {
        // T1 and T2 both read x at 0; T1 installs 1, T2 installs 2 over 1 without having read it.
        final Result r = check(History.chainBuilder(0, "lost update")
            .txn(1, 1, 1).readWrite("x", 7, 0, 1)
            .txn(2, 2, 2).read("x", 7, 0).write("x", 7, 2, 1));
        assertThat(r.serializable()).isFalse();
        assertThat(r.impossibleCount()).isZero();
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles().get(0).anomaly()).isEqualTo("G2");
        assertThat(r.cycles().get(0).transactions()).containsExactlyInAnyOrder(1L, 2L);
        assertThat(r.cycles().get(0).steps()).extracting(SerializabilityChecker.Step::kind)
            .containsExactlyInAnyOrder(EdgeKind.WW, EdgeKind.RW);
        assertThat(r.snapshotIsolationAllowed()).as("a lost update: rw then ww").isFalse();
        assertThat(r.snapshotIsolationWitness()).containsExactlyInAnyOrder(1L, 2L);
    }

    @Test
    void shouldRefuseUnderSnapshotIsolationACycleWhoseRwEdgesAreNotConsecutive() {
        // T1 -rw-> T2 -wr-> T3 -rw-> T4 -wr-> T1: no order of snapshots and commits gives it.
        final Result r = check(History.chainBuilder(0, "rw apart")
            .txn(1, 1, 1).read("t", 1, 0).read("t", 2, 4)
            .txn(2, 2, 2).write("t", 1, 2, 0)
            .txn(3, 3, 3).read("t", 1, 2).read("t", 2, 0)
            .txn(4, 4, 4).write("t", 2, 4, 0));
        assertThat(r.serializable()).isFalse();
        assertThat(r.cycles()).singleElement().satisfies(c -> assertThat(c.anomaly()).isEqualTo("G2"));
        assertThat(r.snapshotIsolationCycles()).isEqualTo(1);
        assertThat(r.snapshotIsolationWitness()).containsExactlyInAnyOrder(1L, 2L, 3L, 4L);
    }

    @Test
    void shouldCountEachHistoryComponentOnceUnderSnapshotIsolation() {
        // Two write cycles (T1, T2 and T3, T4) joined into one component only through pairs of consecutive rw edges
        // (T2 -rw-> T5 -rw-> T3, T4 -rw-> T6 -rw-> T1): two components of the split graph, one of the history.
        final Result r = check(History.chainBuilder(0, "two ww cycles")
            .txn(1, 1, 1).write("t", 1, 1, 0).write("t", 2, 4, 3).write("u", 8, 80, 0)
            .txn(2, 2, 2).write("t", 1, 2, 1).write("t", 2, 3, 0).read("u", 5, 0)
            .txn(3, 3, 3).write("t", 3, 1, 0).write("t", 4, 4, 3).write("u", 6, 60, 0)
            .txn(4, 4, 4).write("t", 3, 2, 1).write("t", 4, 3, 0).read("u", 7, 0)
            .txn(5, 5, 5).read("u", 6, 0).write("u", 5, 50, 0)
            .txn(6, 6, 6).read("u", 8, 0).write("u", 7, 70, 0));
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles()).singleElement().satisfies(c -> assertThat(c.componentSize()).isEqualTo(6));
        assertThat(r.snapshotIsolationCycles()).isEqualTo(1);
        assertThat(r.snapshotIsolationVerdict()).contains("1 component(s) of the graph");
    }

    @Test
    void shouldReportTwoOverwritesOfOneVersionAsImpossibleAndAsACycle() {
        // What the unsafe protocol records: both believe they overwrote version 0.
        final Result r = check(History.chainBuilder(0, "fork")
            .txn(1, 1, 1).readWrite("x", 7, 0, 1)
            .txn(2, 2, 2).readWrite("x", 7, 0, 2));
        assertThat(r.serializable()).isFalse();
        assertThat(r.impossible()).singleElement().asString().contains("overwritten by 2 transactions [T1, T2]");
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles().get(0).anomaly()).isEqualTo("G2");
    }

    @Test
    void shouldFindWriteSkew() {
        final Result r = check(History.chainBuilder(0, "write skew")
            .txn(1, 1, 1).read("y", 1, 0).readWrite("x", 1, 0, 1)
            .txn(2, 2, 2).read("x", 1, 0).readWrite("y", 1, 0, 2));
        assertThat(r.serializable()).isFalse();
        assertThat(r.impossibleCount()).isZero();
        assertThat(r.cycles()).singleElement().satisfies(c -> {
            assertThat(c.anomaly()).isEqualTo("G2");
            assertThat(c.steps()).extracting(SerializabilityChecker.Step::kind)
                .containsExactly(EdgeKind.RW, EdgeKind.RW);
        });
        assertThat(r.snapshotIsolationAllowed()).as("write skew: two consecutive rw edges").isTrue();
    }

    @Test
    void shouldFindCircularInformationFlowAsG1c() {
        // T2 reads T1's x, T1 reads T2's y: each saw the other's write.
        final Result r = check(History.chainBuilder(0, "G1c")
            .txn(1, 1, 1).readWrite("t", 1, 0, 1).read("t", 2, 2)
            .txn(2, 2, 2).read("t", 1, 1).readWrite("t", 2, 0, 2));
        assertThat(r.serializable()).isFalse();
        assertThat(r.cycles()).singleElement().satisfies(c -> {
            assertThat(c.anomaly()).isEqualTo("G1c");
            assertThat(c.steps()).extracting(SerializabilityChecker.Step::kind)
                .containsExactly(EdgeKind.WR, EdgeKind.WR);
        });
        assertThat(r.snapshotIsolationCycles()).isEqualTo(1);
    }

    @Test
    void shouldFindAWriteCycleAsG0() {
        final Result r = check(History.chainBuilder(0, "G0")
            .txn(1, 1, 1).write("t", 1, 1, 0).write("t", 2, 4, 3)
            .txn(2, 2, 2).write("t", 1, 2, 1).write("t", 2, 3, 0));
        assertThat(r.cycles()).singleElement().satisfies(c -> assertThat(c.anomaly()).isEqualTo("G0"));
    }

    @Test
    void shouldPassASerialHistoryWithManyEdgesInAnyFileOrder() {
        final History.Builder b = serialHistory(20_000, 50, 11);
        final Result r = check(b);
        assertThat(r.lines()).last().isEqualTo("serializable");
        assertThat(r.transactions()).isEqualTo(20_000);
        assertThat(r.edgesByKind()[0]).isGreaterThan(10_000);
        assertThat(r.edgesByKind()[1]).isGreaterThan(10_000);
        assertThat(r.edgesByKind()[2]).isGreaterThan(10_000);
    }

    @Test
    void shouldFindTheOneStaleReadInALongSerialHistory() {
        // The serial history again, but one transaction read a version older than the current one.
        final History.Builder b = serialHistory(5_000, 50, 12, 2_500);
        final Result r = check(b);
        assertThat(r.serializable()).isFalse();
        assertThat(r.impossibleCount()).isZero();
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles().get(0).transactions()).contains(2_500L);
    }

    @Test
    void shouldCallAReadOfAVersionNobodyMadeImpossible() {
        final Result r = check(History.chainBuilder(0, "phantom read")
            .txn(1, 1, 1).readWrite("x", 1, 0, 5)
            .txn(2, 2, 2).read("x", 1, 42));
        assertThat(r.serializable()).isFalse();
        assertThat(r.components()).isZero();
        assertThat(r.impossible()).singleElement().asString()
            .contains("T2 read version 42 of x:1, which no committed transaction made");
    }

    @Test
    void shouldCallTwoWritersOfOneVersionImpossible() {
        final Result r = check(History.chainBuilder(0, "duplicate version")
            .txn(1, 1, 1).readWrite("x", 1, 0, 5)
            .txn(2, 2, 2).write("x", 1, 5, 5));
        assertThat(r.impossible()).anySatisfy(p -> assertThat(p).contains("T1 and T2 both made version 5 of x:1"));
    }

    @Test
    void shouldFindACycleThroughALongChainWithoutRecursion() {
        // A ww chain of 100 000 transactions closed into one cycle by a read: deep for a recursive Tarjan.
        final int n = 100_000;
        final History.Builder b = History.chainBuilder(0, "long cycle");
        for (int t = 1; t <= n; t++) {
            b.txn(t, t, t).write("x", 1, t, t - 1);
            if (t == 1) {
                b.read("y", 1, n); // T1 read T_n's y: T_n -> T1 closes the chain
            }
            if (t == n) {
                b.write("y", 1, n, 0);
            }
        }
        final Result r = check(b);
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles().get(0).componentSize()).isEqualTo(n);
        assertThat(r.cycles().get(0).anomaly()).isEqualTo("G1c");
        assertThat(r.cycles().get(0).steps()).hasSize(n);
    }

    // ------------------------------------------------------------------ version 2: order keys, absent reads, deletes

    @Test
    void shouldFindWriteSkewThroughAPhantom() {
        // P read mark:1 absent and flag:1 = 0, and inserted mark:1; Q read mark:1 absent and flag:1, and raised it.
        final Result r = check(History.builder(0, "phantom")
            .txn(1, 1, 1).insert("mark", 1, 0, 10).read("flag", 1, 0)
            .txn(2, 2, 2).readAbsent("mark", 1, 0).readWrite("flag", 1, 0, 11));
        assertThat(r.impossibleCount()).isZero();
        assertThat(r.cycles()).singleElement().satisfies(c -> {
            assertThat(c.anomaly()).isEqualTo("G2");
            assertThat(c.steps()).extracting(SerializabilityChecker.Step::kind)
                .containsExactly(EdgeKind.RW, EdgeKind.RW);
            assertThat(c.steps()).anySatisfy(step -> assertThat(step.detail())
                .contains("mark:1: T2 read the absence at version 0, T1 overwrote it"));
        });
    }

    @Test
    void shouldPlaceAnAbsentReadAtTheNewestDeleteBelowItsBound() {
        // T1 inserts k at 10, T2 deletes it at 20; T3 finds it absent with the bound 21 (an abandoned insert's
        // version left on the object, which nobody committed): it read T2's delete, and T4 inserts again after it.
        final Result r = check(History.builder(0, "absent after a delete")
            .txn(1, 1, 1).insert("t", 1, 0, 10)
            .txn(2, 2, 2).delete("t", 1, 10, 20)
            .txn(3, 3, 3).readAbsent("t", 1, 21).readWrite("t", 2, 0, 30)
            .txn(4, 4, 4).insert("t", 1, 22, 40));
        assertThat(r.lines()).last().isEqualTo("serializable");
        assertThat(r.edgesByKind()[1]).as("wr: T1 -> T2 (the delete read the insert), T2's delete -> T3 and -> T4")
            .isEqualTo(3);
        assertThat(r.edgesByKind()[2]).as("rw: T3 -> T4's insert").isEqualTo(1);
    }

    @Test
    void shouldCallAnAbsentReadOfALiveValueAndAReadOfADeleteImpossible() {
        final Result r = check(History.builder(0, "existence")
            .txn(1, 1, 1).insert("t", 1, 0, 10)
            .txn(2, 2, 2).readAbsent("t", 1, 15)
            .txn(3, 3, 3).delete("t", 1, 10, 20)
            .txn(4, 4, 4).read("t", 1, 20));
        assertThat(r.impossible()).hasSize(2);
        assertThat(r.impossible().get(0)).contains("T2 found t:1 absent at version 10 or below, but T1 made version "
            + "10 a live value");
        assertThat(r.impossible().get(1)).contains("T4 read a value of t:1 at version 20, which T3 made a delete");
    }

    @Test
    void shouldPlaceABlindWriteBetweenTwoVersionsWhichVersionOneCouldNotExpress() {
        // Multi-version timestamp ordering: T2's blind write of x lands at 20, between T1's 10 and T3's 30 that
        // were installed before it. T4 read x at 10 and wrote y; T2 read y before T4's write. In version order
        // T4 -rw-> T2 (x: 10 is followed by 20, not 30) and T2 -rw-> T4 (y): a G2 cycle. Version 1 could only say
        // which version a write overwrote: T2 "overwrote" 10, a fork with T3, and no cycle through T2 and T4.
        final Result r = check(History.builder(0, "blind write between versions")
            .txn(1, 1, 1).write("x", 1, 10)
            .txn(3, 2, 3).write("x", 1, 30)
            .txn(4, 3, 4).read("x", 1, 10).readWrite("y", 1, 0, 5)
            .txn(2, 4, 2).read("y", 1, 0).write("x", 1, 20));
        assertThat(r.impossibleCount()).isZero();
        assertThat(r.cycles()).anySatisfy(c -> {
            assertThat(c.anomaly()).isEqualTo("G2");
            assertThat(c.transactions()).contains(2L, 4L);
        });
    }

    @Test
    void shouldOrderAVersionTwoHistoryByValueAndPassASerialOne() {
        // Written out of order (files are not in commit order): 5, 3, 9 are x's versions in the order 3, 5, 9.
        final Result r = check(History.builder(0, "ordered")
            .txn(2, 2, 2).readWrite("x", 1, 3, 5)
            .txn(1, 1, 1).readWrite("x", 1, 0, 3)
            .txn(3, 3, 3).readWrite("x", 1, 5, 9).readAbsent("z", 1, 0));
        assertThat(r.lines()).last().isEqualTo("serializable");
        assertThat(r.edgesByKind()[0]).isEqualTo(2);
    }

    /**
     * A serial execution over {@code keys} keys: each transaction reads three keys at their current version and
     * writes one or two of them; the records are shuffled (files are not in commit order). {@code stale}, if given,
     * is the transaction that reads one key at the version before its current one.
     */
    private static History.Builder serialHistory(final int transactions, final int keys, final long seed,
                                                 final int... stale) {
        final SplittableRandom random = new SplittableRandom(seed);
        final long[] current = new long[keys];
        final long[] previous = new long[keys];
        final List<long[][]> txns = new ArrayList<>();
        for (int t = 1; t <= transactions; t++) {
            final List<long[]> ops = new ArrayList<>();
            final int first = random.nextInt(keys);
            for (int i = 0; i < 3; i++) {
                final int k = (first + i * 7) % keys;
                final boolean writes = i == 0 || random.nextInt(3) == 0;
                final long read = stale.length > 0 && stale[0] == t && i == 1 && current[k] != 0 ? previous[k]
                    : current[k];
                ops.add(new long[] {t, k, read, writes ? t : -1});
            }
            for (final long[] op : ops) {
                if (op[3] > 0) {
                    previous[(int) op[1]] = current[(int) op[1]];
                    current[(int) op[1]] = op[3];
                }
            }
            txns.add(ops.toArray(new long[0][]));
        }
        Collections.shuffle(txns, new java.util.Random(seed));
        final History.Builder b = History.chainBuilder(0, "serial");
        for (final long[][] ops : txns) {
            b.txn(ops[0][0], ops[0][0], ops[0][0]);
            for (final long[] op : ops) {
                if (op[3] > 0) {
                    b.readWrite("k", op[1], op[2], op[3]);
                } else {
                    b.read("k", op[1], op[2]);
                }
            }
        }
        return b;
    }
}
