package io.scythe.txn.selcc;

import io.scythe.fabric.RemoteRegion;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.scythe.storage.ObjectLayout;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.PeerLoops;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.spi.ComputeNodeContext;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster node's invalidation to an X holder whose compute node the directory names no longer, or names by a newer
 * incarnation, through the real {@link LineCache} (issue 21): cnA's loop (participant 1, a cluster node: it hears
 * releases, its commits are recoverable) wants a line whose latch word names participant 2, cnB, Exclusive; cnB runs
 * no process here. The directory says what became of cnB.
 */
class SelccLeftHolderTest {
    private static final String T = "rows";
    /** Transaction-id prefixes of two incarnations of cnB (epoch 1 and 2). */
    private static final long E1 = 1L << 48;
    private static final long E2 = 2L << 48;
    private final OneMemoryNode node = new OneMemoryNode(T, 64);
    private final List<ComputeNodeContext.PeerReleased> released = new ArrayList<>();
    private CnPeers a;

    SelccLeftHolderTest() throws Exception {
    }

    @AfterEach
    void close() throws Exception {
        System.clearProperty("scythe.selcc.deadHolderWaitNs");
        if (a != null) {
            a.close().await(10, TimeUnit.SECONDS);
        }
        node.close();
    }

    private int offset(final long key) {
        return node.table.offsetOf(node.table.lookup(key)) + ObjectLayout.PROTOCOL_WORD_OFFSET;
    }

    private void setWord(final long key, final long word) {
        node.table.objectMemory().putLongVolatile(offset(key), word);
    }

    /** cnA's line cache, its directory naming cnB {@code cnB} (null: cnB's member left the cluster). */
    private LineCache cnA(final String cnB) throws Exception {
        final CnPeers.Directory directory = peer -> peer.equals("cnA") ? peer : peer.equals("cnB") ? cnB : null;
        a = new CnPeers(node.vertx, node.fabric.attachNow("cnA"), CnPeers.defaultOptions().maxRings(8)
            .maxReplyRings(16), 1, directory);
        SelccModule.hearReleases(io.scythe.txn.ComputeNodePeers.context(0, List.of("cnA", "cnB"), a,
            new java.util.HashMap<>(), l -> { }, released::add, false), a);
        LineCache.serve(a);
        a.start(List.of(node.loop)).await(10, TimeUnit.SECONDS);
        final TxnRuntime r = node.onLoop(() -> {
            final TxnRuntime rt = new TxnRuntime(node.catalog, node.rrpc, LoopTimers.current(),
                new TsoGroup(64, new DirectTsoSource(node.counter, () -> node.rrpc.oneSided("tso"))),
                Watermarks.DEFAULT, 1L << 40);
            rt.peerLoops(new PeerLoops(a, 1, 0, n -> new PeerLoops.Address(List.of("cnA", "cnB").get(n - 1), 0)));
            io.scythe.txn.recovery.RedoLog.enable(rt, io.scythe.txn.recovery.RedoRecordDescriptor.SLOT_BYTES * 8);
            return Future.succeededFuture(rt);
        });
        assertThat(SelccModule.releases(a)).as("a cluster node: it hears releases").isNotNull();
        return node.onLoop(() -> Future.succeededFuture(LineCache.of(r)));
    }

    /** Starts cnA's Exclusive acquisition of {@code key}'s line on its loop; the acquisition, once started. */
    private Future<Void> acquire(final LineCache cache, final long key) throws Exception {
        final RemoteRegion objects = node.table.describe().objects();
        final long address = objects.address() + node.table.offsetOf(node.table.lookup(key));
        final AtomicReference<Future<Void>> started = new AtomicReference<>();
        node.onLoop(() -> {
            started.set(cache.acquireExclusive(cache.frame("mn", address, objects.rkey(), 64), true));
            return Future.succeededFuture();
        });
        return started.get();
    }

    /** How {@code acquisition} ended, awaited: null if it succeeded, else its failure. */
    private static Throwable outcome(final Future<Void> acquisition) throws Exception {
        return acquisition.<Throwable>transform(done -> Future.succeededFuture(done.cause())).await(20,
            TimeUnit.SECONDS);
    }

    private void release(final String incarnation, final long prefix) throws Exception {
        node.onLoop(() -> Future.succeededFuture(released.get(0).released(incarnation, new long[] {prefix}, "mn")));
    }

    /**
     * Commit 77aa6966: cnB's member left (SIGKILLed while X holder, its recovery to come), so the directory names no
     * cnB. The PeerWr is never sent; the attempt aborts LOCKED (the coordinator retries it) instead of failing with
     * the RpcException "no compute node 'cnB' in the cluster", which failed the client's transaction (this test
     * failed so with the 6 lines of that commit removed).
     */
    @Test
    void shouldAbortLockedWhenTheDirectoryNoLongerNamesTheHolder() throws Exception {
        final LineCache cache = cnA(null);
        setWord(5, LatchWord.exclusive(2));

        final Throwable failed = outcome(acquire(cache, 5));

        assertThat(failed).isInstanceOf(AbortException.class).isNotInstanceOf(RpcException.class);
        assertThat(((AbortException) failed).reason()).isEqualTo(AbortReason.LOCKED);
        assertThat(failed.getMessage()).contains("holder not in the cluster");
        assertThat(node.table.objectMemory().getLongVolatile(offset(5))).as("nothing changed")
            .isEqualTo(LatchWord.exclusive(2));
    }

    /**
     * Issue 21 review, finding 3, through {@code LineCache#invalidate}: the directory names cnB.e2 (restarted), the
     * PeerWr to it fails (no process: cut off), and the requester waits for the word while it names the holder. The
     * news of cnB.e1's release says nothing of cnB.e2: the wait goes on, and ends GRANTED when cnB.e2's handover FAA
     * lands. On another line, cnB.e2's own release ends the wait at once (the word decides), long before the
     * dead-holder wait (60 s here) is over.
     */
    @Test
    void shouldWaitForTheIncarnationTheDirectoryNamedNotAnotherOfItsNode() throws Exception {
        System.setProperty("scythe.selcc.deadHolderWaitNs", "60000000000");
        final LineCache cache = cnA("cnB.e2");
        setWord(5, LatchWord.exclusive(2));

        final Future<Void> acquisition = acquire(cache, 5);
        Thread.sleep(100); // the call fails at once (nothing serves cnB.e2): the requester READs the word every 5 ms
        assertThat(acquisition.isComplete()).as("waiting for the word").isFalse();
        release("cnB.e1", E1);
        Thread.sleep(100);
        assertThat(acquisition.isComplete()).as("cnB.e1's release says nothing of cnB.e2").isFalse();
        setWord(5, LatchWord.exclusive(1)); // cnB.e2's handover FAA lands

        assertThat(outcome(acquisition)).as("handed over").isNull();

        setWord(6, LatchWord.exclusive(2));
        final Future<Void> other = acquire(cache, 6);
        Thread.sleep(100);
        assertThat(other.isComplete()).as("waiting for the word").isFalse();
        release("cnB.e2", E2);
        final Throwable failed = outcome(other); // the word still names participant 2: not held, until the rounds end
        assertThat(failed).isInstanceOf(AbortException.class);
        assertThat(((AbortException) failed).reason()).isEqualTo(AbortReason.LOCKED);
    }
}
