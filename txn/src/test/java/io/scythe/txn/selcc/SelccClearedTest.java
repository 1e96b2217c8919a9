package io.scythe.txn.selcc;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the memory nodes' dead-node steps tell the compute nodes ({@link SelccRecovery#cleared}): per memory node (a
 * participant cleared on one node may still hold lines of another whose step has not run), and forgotten when a new
 * incarnation takes the participant's number over, so that the bookkeeping stays bounded and a reused number is
 * served again (and a late step of the old incarnation clears none of the new one's bits).
 */
class SelccClearedTest {
    private static final int P = 3;
    private static final int LIVE = 5;
    private static final long OLD = 1L << 48 | 2L << 32;  // epoch 1, slot 2: the dead incarnation's id prefix
    private static final long NEW = 21L << 48 | 2L << 32; // epoch 21, same slot: the restarted node
    private LocalFabric fabric;
    private LogDb mn0;
    private LogDb mn1;
    private Table rows0;
    private Table rows1;

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        mn0 = db("mn0");
        mn1 = db("mn1");
        rows0 = mn0.create(TableSchema.fixed(1, "rows", 8, 8));
        rows1 = mn1.create(TableSchema.fixed(1, "rows", 8, 8));
    }

    private LogDb db(final String name) {
        final LogDb db = new LogDb(fabric.attachNow(name));
        final SelccModule module = new SelccModule();
        db.objectFormat(schema -> module.objectFormat(SelccModule.SELCC_2PL, schema));
        return db;
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    @Test
    void shouldTellClearedPerMemoryNode() {
        SelccRecovery.joined(fabric, OLD | 1L << 40, P);
        SelccRecovery.joined(fabric, 4L << 32 | 1L << 40, LIVE);
        final int on0 = object(rows0, 1, LatchWord.exclusive(P));
        final int on1 = object(rows1, 1, LatchWord.bit(P) | LatchWord.bit(LIVE));

        assertThat(SelccRecovery.clearDead(mn0, new long[] {OLD})).isEqualTo(1);

        assertThat(word(rows0, on0)).isEqualTo(LatchWord.FREE);
        assertThat(word(rows1, on1)).isEqualTo(LatchWord.bit(P) | LatchWord.bit(LIVE)); // mn1's step not run yet
        assertThat(SelccRecovery.cleared(fabric, "mn0", P)).isTrue();
        assertThat(SelccRecovery.cleared(fabric, "mn1", P)).isFalse(); // its lines there still name P
        assertThat(SelccRecovery.dead(fabric, P)).isTrue();
        assertThat(SelccRecovery.dead(fabric, LIVE)).isFalse();

        assertThat(SelccRecovery.clearDead(mn1, new long[] {OLD})).isEqualTo(1);

        assertThat(word(rows1, on1)).isEqualTo(LatchWord.bit(LIVE));
        assertThat(SelccRecovery.cleared(fabric, "mn1", P)).isTrue();
        assertThat(SelccRecovery.clearedEntries(fabric)).isEqualTo(2);
    }

    @Test
    void shouldForgetAParticipantWhoseNumberANewIncarnationTakesOver() {
        for (int incarnation = 1; incarnation <= 3; incarnation++) { // a node restarted again and again
            final long prefix = (long) incarnation << 48 | 2L << 32;
            SelccRecovery.joined(fabric, prefix | 1L << 40, P);
            SelccRecovery.joined(fabric, prefix | 1L << 40, P); // the same loop again keeps its state
            assertThat(SelccRecovery.cleared(fabric, "mn0", P)).isFalse();
            SelccRecovery.clearDead(mn0, new long[] {prefix});
            SelccRecovery.clearDead(mn1, new long[] {prefix});
            assertThat(SelccRecovery.cleared(fabric, "mn0", P)).isTrue();
            SelccRecovery.joined(fabric, prefix | 1L << 40, P); // a dead loop's cache made late: still cleared
            assertThat(SelccRecovery.cleared(fabric, "mn1", P)).isTrue();
            assertThat(SelccRecovery.clearedEntries(fabric)).isEqualTo(2); // bounded: one per memory node
        }
        final long last = 3L << 48 | 2L << 32;
        SelccRecovery.joined(fabric, NEW | 1L << 40, P); // the restarted node takes number P over

        assertThat(SelccRecovery.cleared(fabric, "mn0", P)).isFalse();
        assertThat(SelccRecovery.cleared(fabric, "mn1", P)).isFalse();
        assertThat(SelccRecovery.dead(fabric, P)).isFalse();
        assertThat(SelccRecovery.clearedEntries(fabric)).isZero();
        // A late step of the old incarnation (retried) clears none of the bits the new one holds under its number.
        final int held = object(rows0, 1, LatchWord.exclusive(P));
        assertThat(SelccRecovery.clearDead(mn0, new long[] {last})).isZero();
        assertThat(word(rows0, held)).isEqualTo(LatchWord.exclusive(P));
        assertThat(SelccRecovery.participants(fabric, new long[] {last})).isEmpty();
    }

    @Test
    void shouldClearTheBitsOfAComputeNodeOfAnotherProcessByTheHostsNumbers() {
        // Cluster nodes: the memory node never saw the dead node's loops join; the host numbers them (its registry).
        final long other = 3L << 48 | 7L << 32;
        final int on0 = object(rows0, 1, LatchWord.exclusive(7) | LatchWord.bit(LIVE));
        final int on1 = object(rows0, 2, LatchWord.bit(8) | LatchWord.bit(LIVE));

        assertThat(SelccRecovery.clearDead(mn0, new long[] {other})).isZero(); // nothing known of it
        assertThat(SelccRecovery.clearDead(mn0, new long[] {other},
            prefix -> prefix == other ? new int[] {7, 8} : new int[0])).isEqualTo(2);

        assertThat(word(rows0, on0)).isEqualTo(LatchWord.bit(LIVE));
        assertThat(word(rows0, on1)).isEqualTo(LatchWord.bit(LIVE));
        assertThat(SelccRecovery.cleared(fabric, "mn0", 7)).isTrue();
        assertThat(SelccRecovery.cleared(fabric, "mn0", 8)).isTrue();
    }

    @Test
    void shouldTakeNoLatchOnARestartedNodeUntilItsEarlierIncarnationsAreRecovered() {
        final java.util.List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> told = new java.util.ArrayList<>();
        final Object restarted = new Object();
        final Object fresh = new Object();
        SelccModule.awaitOwnRecovery(io.scythe.txn.ComputeNodePeers.context(1, java.util.List.of("cn0", "cn1"), null,
            java.util.Map.of(), told::add, true), restarted, 0);
        SelccModule.awaitOwnRecovery(io.scythe.txn.ComputeNodePeers.context(0, java.util.List.of("cn0", "cn1"), null,
            java.util.Map.of(), told::add, false), fresh, 0);

        assertThat(SelccModule.awaiting(restarted)).isTrue();
        assertThat(SelccModule.awaiting(fresh)).isFalse();
        assertThat(told).hasSize(1);
        assertThat(told.get(0).recovered("cn0", OLD, -1L)).as("another node's recovery").isNull();
        assertThat(SelccModule.awaiting(restarted)).isTrue();
        assertThat(told.get(0).recovered("cn1", 0, -1L)).isNotNull(); // the host names this node: recovered
        assertThat(SelccModule.awaiting(restarted)).isFalse();
    }

    /**
     * Issue 21 (late take-backs): a restarted node takes latches only a grace after its earlier incarnations were told
     * recovered, so that survivors take back first what names its reused participant number
     * ({@code LineCache#checkLate}).
     */
    @Test
    void shouldTakeLatchesOnlyAGraceAfterTheOwnRecoveryWasTold() throws InterruptedException {
        final java.util.List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> told = new java.util.ArrayList<>();
        final Object restarted = new Object();
        SelccModule.awaitOwnRecovery(io.scythe.txn.ComputeNodePeers.context(1, java.util.List.of("cn0", "cn1"), null,
            java.util.Map.of(), told::add, true), restarted, 100);

        assertThat(told.get(0).recovered("cn1", 0, -1L)).contains("100 ms from now");
        assertThat(SelccModule.awaiting(restarted)).as("within the grace").isTrue();
        final long deadline = System.nanoTime() + 5_000_000_000L;
        while (SelccModule.awaiting(restarted) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(SelccModule.awaiting(restarted)).as("after the grace").isFalse();
        assertThat(SelccModule.ownRecoveryGraceMs()).isEqualTo(SelccModule.DEFAULT_OWN_RECOVERY_GRACE_MS);
    }

    /** Inserts {@code key} with latch word {@code word}; returns its offset. */
    private static int object(final Table table, final long key, final long word) {
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, key);
        final int at = table.offsetOf(table.insert(key, v, 0, 8, 1));
        table.objectMemory().putLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET, word);
        return at;
    }

    private static long word(final Table table, final int at) {
        return table.objectMemory().getLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET);
    }
}
