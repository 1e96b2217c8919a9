package io.scythe.txn.selcc;

import io.scythe.hotspot.Watermarks;
import io.scythe.storage.ObjectLayout;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** SEL latches under 2PL (no wait), two participants on one memory node: the latch word after every step. */
class Sel2plTest {
    private static final String T = "rows";
    private final OneMemoryNode node = new OneMemoryNode(T, 64);
    private final TxnRuntime p1 = runtime(1);
    private final TxnRuntime p2 = runtime(2);

    Sel2plTest() throws Exception {
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    private TxnRuntime runtime(final int participant) throws Exception {
        return on(() -> Future.succeededFuture(new TxnRuntime(node.catalog, node.rrpc, LoopTimers.current(),
            new TsoGroup(64, new DirectTsoSource(node.counter, () -> node.rrpc.oneSided("tso"))), Watermarks.DEFAULT,
            (long) participant << 40)));
    }

    private <R> R on(final Supplier<Future<R>> body) throws Exception {
        return node.onLoop(body);
    }

    private Txn begin(final TxnRuntime runtime) throws Exception {
        return on(() -> Future.succeededFuture(SelccModule.SEL_2PL.begin(runtime, false)));
    }

    private long latch(final long key) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key))
            + ObjectLayout.PROTOCOL_WORD_OFFSET);
    }

    private static long value(final UnsafeBuffer b) {
        return b.getLong(0);
    }

    private void assertAborts(final Supplier<Future<?>> op, final AbortReason reason) {
        assertThatThrownBy(() -> on(op::get)).isInstanceOf(AbortException.class).extracting(e -> ((AbortException) e).reason()).isEqualTo(reason);
    }

    @Test
    void shouldShareReadersAndRefuseWritersWithoutWaiting() throws Exception {
        final Txn t1 = begin(p1);
        assertThat(value(on(() -> t1.read(T, 0)))).isEqualTo(100);
        assertThat(latch(0)).isEqualTo(LatchWord.bit(1));
        final Txn t2 = begin(p2);
        assertAborts(() -> t2.readForUpdate(T, 0), AbortReason.LOCKED);
        assertThat(latch(0)).as("a failed X CAS leaves the word").isEqualTo(LatchWord.bit(1));
        on(t2::abort);
        final Txn t3 = begin(p2);
        on(() -> t3.read(T, 0));
        assertThat(latch(0)).isEqualTo(LatchWord.bit(1) | LatchWord.bit(2));
        // t1's upgrade fails (2 reads), so does its fallback: it then holds nothing and aborts.
        final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
        seven.putLong(0, 7);
        t1.write(T, 0, seven, 0, 8);
        assertAborts(t1::commit, AbortReason.LOCKED);
        assertThat(latch(0)).isEqualTo(LatchWord.bit(2));
        assertThat(on(t3::commit)).isZero();
        assertThat(latch(0)).isEqualTo(LatchWord.FREE);
        assertThat(node.valueOf(0)).isEqualTo(100);
    }

    @Test
    void shouldUpgradeAndWriteBackWithTheWriteCounter() throws Exception {
        final long before = node.versionOf(1);
        final Txn t = begin(p1);
        on(() -> t.read(T, 1));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, 42);
        t.write(T, 1, v, 0, 8);
        on(t::commit);
        assertThat(node.valueOf(1)).isEqualTo(42);
        assertThat(node.versionOf(1)).isEqualTo(before + 1);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        final Txn u = begin(p2);
        on(() -> u.readForUpdate(T, 1));
        assertThat(latch(1)).isEqualTo(LatchWord.exclusive(2));
        u.write(T, 1, v, 0, 8);
        on(u::commit);
        assertThat(node.versionOf(1)).isEqualTo(before + 2);
        assertThat(latch(1)).isEqualTo(LatchWord.FREE);
        assertThat(on(() -> Future.succeededFuture(LocalLatches.of(p1).size() + LocalLatches.of(p2).size())))
            .isZero();
    }

    @Test
    void shouldShareOneReaderBitAmongTheFlowsOfOneLoop() throws Exception {
        final Txn a = begin(p1);
        final Txn b = begin(p1);
        on(() -> a.read(T, 2));
        on(() -> b.read(T, 2));
        assertThat(latch(2)).as("one bit, not two (a second FAA would carry)").isEqualTo(LatchWord.bit(1));
        final Txn c = begin(p1);
        assertAborts(() -> c.readForUpdate(T, 2), AbortReason.LOCKED);
        on(a::commit);
        assertThat(latch(2)).isEqualTo(LatchWord.bit(1));
        on(b::abort);
        assertThat(latch(2)).isEqualTo(LatchWord.FREE);
    }

    @Test
    void shouldUndoTheReaderBitWhenAnExclusiveHolderShows() throws Exception {
        node.setHeaderWord(3, ObjectLayout.PROTOCOL_WORD_OFFSET, LatchWord.exclusive(5));
        final Txn t = begin(p1);
        assertAborts(() -> t.read(T, 3), AbortReason.LOCKED);
        assertThat(latch(3)).isEqualTo(LatchWord.exclusive(5));
        on(t::abort);
        assertThat(on(() -> Future.succeededFuture(LocalLatches.of(p1).size()))).isZero();
    }

    @Test
    void shouldRefuseAParticipantPast58() throws Exception {
        final TxnRuntime p59 = runtime(59);
        assertThatThrownBy(() -> begin(p59)).hasMessageContaining("at most 58");
    }
}
