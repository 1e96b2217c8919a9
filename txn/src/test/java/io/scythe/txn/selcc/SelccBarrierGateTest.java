package io.scythe.txn.selcc;

import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.CnPeers;
import io.scythe.storage.ObjectLayout;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.PeerLoops;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.spi.ComputeNodeContext;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 21 review, finding 2: a restarted compute node takes no latch before its recovery barrier passed, on every
 * path. Only LatchTxn's reads were gated: a commit's inserts latched the key present in the index (sel-2pl's own CAS,
 * selcc-2pl's line cache) or the object their INSERT created, and a line cache acquisition from elsewhere (B-link
 * GCLs) was not gated at all. Here participant 1's node awaits its barrier: an insert of a present key and of a new
 * one abort LOCKED, creating and latching nothing; a direct line-cache acquisition fails the same way; once the
 * barrier passed, the same insert commits. Before the fix the inserts committed (sel-2pl) and the acquisition took
 * the word.
 */
class SelccBarrierGateTest {
    private static final String T = "rows";
    private final OneMemoryNode node = new OneMemoryNode(T, 64);
    /** The restarted node's CN-to-CN messaging: never started, only the key its barrier state is kept by. */
    private final CnPeers peers = new CnPeers(node.vertx, node.fabric.attachNow("cn1"), CnPeers.defaultOptions(), 1,
        peer -> null);
    private final List<ComputeNodeContext.PeerRecovered> told = new ArrayList<>();

    SelccBarrierGateTest() throws Exception {
        SelccModule.awaitOwnRecovery(io.scythe.txn.ComputeNodePeers.context(1, List.of("cn0", "cn1"), peers,
                Map.of(), told::add, l -> { }, true, Map.of("cn1.e1", 1L << 48)), peers, 1,
            (peer, loop, incarnation, prefix) -> Future.succeededFuture(true), peer -> Future.succeededFuture(false),
            5_000_000_000L);
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    private TxnRuntime runtime() throws Exception {
        return on(() -> {
            final TxnRuntime r = new TxnRuntime(node.catalog, node.rrpc, LoopTimers.current(),
                new TsoGroup(64, new DirectTsoSource(node.counter, () -> node.rrpc.oneSided("tso"))),
                Watermarks.DEFAULT, 1L << 40);
            r.peerLoops(new PeerLoops(peers, 1, 0, n -> new PeerLoops.Address("cn1", 0)));
            return Future.succeededFuture(r);
        });
    }

    private <R> R on(final Supplier<Future<R>> body) throws Exception {
        return node.onLoop(body);
    }

    private long latch(final long key) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key))
            + ObjectLayout.PROTOCOL_WORD_OFFSET);
    }

    private Txn inserting(final io.scythe.txn.Protocol protocol, final TxnRuntime r, final long key) throws Exception {
        final Txn t = on(() -> Future.succeededFuture(protocol.begin(r, false)));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, 7);
        t.insert(T, key, v, 0, 8);
        return t;
    }

    private void assertNotYet(final Supplier<Future<?>> op) {
        assertThatThrownBy(() -> on(op::get)).isInstanceOf(AbortException.class)
            .hasMessageContaining("takes no SELCC latch yet")
            .extracting(e -> ((AbortException) e).reason()).isEqualTo(AbortReason.LOCKED);
    }

    @Test
    void shouldTakeNoLatchForAnInsertOrALineBeforeTheBarrierPassed() throws Exception {
        final TxnRuntime r = runtime();
        assertThat(SelccModule.awaiting(peers)).isTrue();
        for (final io.scythe.txn.Protocol protocol : List.of(SelccModule.SEL_2PL, SelccModule.SELCC_2PL)) {
            final Txn present = inserting(protocol, r, 3);
            assertNotYet(present::commit);
            on(present::abort);
            final Txn created = inserting(protocol, r, 40);
            assertNotYet(created::commit);
            on(created::abort);
        }
        assertThat(latch(3)).as("no latch taken on the present key").isEqualTo(LatchWord.FREE);
        assertThat(node.table.lookup(40)).as("no INSERT before the barrier").isZero();

        final LineCache cache = on(() -> Future.succeededFuture(LineCache.of(r)));
        final io.scythe.fabric.RemoteRegion objects = node.table.describe().objects();
        final long address = objects.address() + node.table.offsetOf(node.table.lookup(5));
        assertNotYet(() -> cache.acquireExclusive(cache.frame("mn", address, objects.rkey(), 64), true));
        assertThat(latch(5)).isEqualTo(LatchWord.FREE);

        assertThat(told.get(0).recovered("cn1", 1L << 48, -1L)).isNotNull(); // the host: recovered; every one acks
        final long deadline = System.nanoTime() + 30_000_000_000L; // a bound: loaded machines
        while (SelccModule.awaiting(peers) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(SelccModule.awaiting(peers)).isFalse();
        final Txn after = inserting(SelccModule.SEL_2PL, r, 40);
        on(after::commit);
        assertThat(node.valueOf(40)).isEqualTo(7);
    }
}
