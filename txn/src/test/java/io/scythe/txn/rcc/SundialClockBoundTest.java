package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.TableSchema;
import io.scythe.txn.AbortException;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.rcc.sundial.SundialTuple;
import io.scythe.txn.spi.ClockBound;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SUNDIAL's published bound on its logical commit timestamps (issue 18, {@link RccClock#logicalBound}), on real
 * commits: a commit whose {@code commit.tts} (here the {@code wts} of a record it read) is above the bound its compute
 * node published aborts ({@link RccClock#BEYOND_BOUND}) before it writes any timestamp (no lease renewed, nothing
 * installed, no lock left) and asks for a larger bound; once that is published the retry commits at or below it. So
 * the last bound a SUNDIAL node published is above every timestamp it wrote, which a memory node's settling floors
 * above once the node is down ({@code RtsFloorTest#shouldOrderASundialWriterAboveACommitAtTheBoundADownComputeNodePublished}).
 */
class SundialClockBoundTest {
    private static final int MAX = 8;
    /** The wts of key 1: 5,000 ticks, above the first bound ({@link RccClock#LOGICAL_BOUND_LEAD_TICKS}). */
    private static final long HIGH = (5_000L << RccClock.ID_BITS) | 3;

    @ParameterizedTest
    @ValueSource(strings = {"primitive=onesided", "primitive=rpc"})
    void shouldAbortACommitAboveThePublishedBoundBeforeWritingAnyTimestampAndCommitOnceALargerIsPublished(
        final String form) throws Exception {
        final int room = RccModule.SUNDIAL.objectRoom(TableSchema.fixed(1, "items", MAX, 32));
        try (OneMemoryNode node = new OneMemoryNode("items", 32, false, MAX, n -> n, room)) {
            final int rtsAt = SundialTuple.rtsOffset(MAX);
            node.setHeaderWord(1, ObjectLayout.VERSION_OFFSET, HIGH);
            node.setHeaderWord(1, rtsAt, HIGH);
            final RccModule module = new RccModule();
            final Protocol p = ProtocolRegistry.protocol("rcc-sundial:" + form);
            final ClockBound bound = module.clockBound(p, () -> 1L << 50);
            assertThat(bound).as("SUNDIAL publishes a bound").isNotNull();
            assertThat(bound.nextBound()).as("logical: the host's clock plays no part")
                .isEqualTo(RccClock.LOGICAL_BOUND_LEAD_TICKS);
            bound.published(bound.nextBound()); // as a cluster node does before its loops serve
            final java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
            bound.onWant(asked::incrementAndGet); // a cluster node publishes at once (ScytheNode#publishClockBounds)

            final String first = node.on(rt -> attempt(module, bound, p, rt));
            assertThat(first).isEqualTo("aborted " + RccClock.BEYOND_BOUND);
            assertThat(node.valueOf(2)).isEqualTo(100);
            assertThat(node.versionOf(2)).as("nothing installed").isEqualTo(ObjectLayout.LOADED_VERSION);
            assertThat(rts(node, 3)).as("key 3's lease not renewed").isEqualTo(ObjectLayout.LOADED_VERSION);
            assertThat(lock(node, 2)).as("key 2's lock released").isZero();
            assertThat(bound.published()).as("not raised before it is published")
                .isEqualTo(RccClock.LOGICAL_BOUND_LEAD_TICKS);
            assertThat(bound.nextBound()).as("the next publication covers the refused commit")
                .isEqualTo(5_000 + RccClock.LOGICAL_BOUND_LEAD_TICKS);
            assertThat(asked.get()).as("the node told to publish it now").isEqualTo(1);

            bound.published(bound.nextBound());
            final String retried = node.on(rt -> attempt(module, bound, p, rt));
            assertThat(retried).isEqualTo("ok");
            assertThat(node.valueOf(2)).isEqualTo(101);
            assertThat(node.versionOf(2)).as("commit.tts: key 1's wts").isEqualTo(HIGH);
            assertThat(rts(node, 3)).as("key 3's lease renewed to commit.tts").isEqualTo(HIGH);
            assertThat(RccClock.ticksOf(HIGH)).isLessThanOrEqualTo(bound.published());
            assertThat(lock(node, 2)).isZero();
        }
    }

    /** Reads keys 1 and 3, adds 1 to key 2, commits, on a loop bounded by {@code bound}: "ok" or "aborted why". */
    private static Future<String> attempt(final RccModule module, final ClockBound bound, final Protocol p,
                                          final io.scythe.txn.TxnRuntime rt) {
        module.useClockBound(rt, bound);
        final Txn txn = p.begin(rt, false);
        return txn.read("items", 1).compose(v -> txn.read("items", 3)).compose(v -> txn.read("items", 2))
            .compose(v -> {
                final UnsafeBuffer next = new UnsafeBuffer(new byte[MAX]);
                next.putLong(0, v.getLong(0) + 1);
                txn.write("items", 2, next, 0, MAX);
                return txn.commit();
            }).transform(ar -> Future.succeededFuture(ar.succeeded() ? "ok"
                : ar.cause() instanceof AbortException a ? "aborted " + a.reason() : "failed " + ar.cause()));
    }

    private static long rts(final OneMemoryNode node, final long key) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key))
            + SundialTuple.rtsOffset(MAX));
    }

    private static long lock(final OneMemoryNode node, final long key) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key))
            + SundialTuple.LOCK_OFFSET);
    }
}
