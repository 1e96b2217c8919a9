package io.scythe.txn.recovery;

import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.TxnRuntime;
import io.scythe.tso.DirectTsoSource;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.tso.TsoGroup;
import io.scythe.hotspot.Watermarks;
import io.scythe.txn.scythe.ScytheTxn;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 23 (stop 40): a roll-forward WRITE reported TRANSPORT_RETRY_EXCEEDED (on tcp it may still execute later, after
 * a retry's verbs on a new connection: {@code TcpFabricTest}) fails the recovery with
 * {@link CnRecovery.WritesInDoubtException}, which the recovery duty hands over instead of retrying here; a roll-forward
 * failing otherwise (nothing executed) fails as it did, and is retried.
 */
class CnRecoveryInDoubtTest {
    @Test
    void shouldFailARecoveryWhoseRollForwardWriteTimedOutAsWritesInDoubt() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("t", 64)) {
            final RrpcClient dying = new RrpcClient(node.vertx, node.fabric.attachNow("cnDead"), new RrpcOptions());
            // cnDead's commit of key 3 stops once its record is durable: fenced, its write-back never lands.
            final Promise<Object> died = Promise.promise();
            node.loop.runOnContext(v -> {
                final TxnRuntime rt = new TxnRuntime(node.catalog, dying, LoopTimers.current(),
                    new TsoGroup(64, new DirectTsoSource(node.counter, () -> dying.oneSided("tso"))),
                    Watermarks.DEFAULT, 2L << 40);
                RedoLog.enable(rt, 64 << 10).afterAppend(() -> {
                    node.fabric.nic("mn").fence("cnDead");
                    died.tryComplete("appended");
                });
                final ScytheTxn txn = new ScytheTxn(rt, true);
                txn.readForUpdate("t", 3).compose(value -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, 777);
                    txn.write("t", 3, next, 0, 8);
                    return txn.commit();
                }).onComplete(ar -> died.tryComplete(ar.failed() ? ar.cause() : ar.result()));
            });
            assertThat(died.future().await(10, TimeUnit.SECONDS)).as("fenced mid-commit").isEqualTo("appended");
            assertThat(valueOf(node, 3)).as("nothing written back").isEqualTo(100);
            // The recoverer's first roll-forward WRITE lands and reports a transport timeout.
            final AtomicInteger failed = new AtomicInteger();
            node.verbFaults.set((qp, opcode) -> opcode == Opcode.WRITE && qp.attachment() instanceof RdmaChannel
                && qp.localNode().equals("cn") && failed.getAndIncrement() == 0
                ? WcStatus.TRANSPORT_RETRY_EXCEEDED : null);
            final Object first = node.on(rt -> new CnRecovery(rt).recover("cnDead").<Object>map(r -> r)
                .recover(Future::succeededFuture));
            assertThat(first).isInstanceOf(CnRecovery.WritesInDoubtException.class);
            assertThat(CnRecovery.mayStillLand((Throwable) first)).isTrue();
            // Other failures are of verbs that did not execute: told as they were.
            node.verbFaults.set((qp, opcode) -> opcode == Opcode.WRITE && qp.attachment() instanceof RdmaChannel
                && qp.localNode().equals("cn") ? WcStatus.REMOTE_ACCESS_ERROR : null);
            final Object second = node.on(rt -> new CnRecovery(rt).recover("cnDead").<Object>map(r -> r)
                .recover(Future::succeededFuture));
            assertThat(second).isInstanceOf(Throwable.class).isNotInstanceOf(CnRecovery.WritesInDoubtException.class);
            assertThat(CnRecovery.mayStillLand((Throwable) second)).isFalse();
            node.verbFaults.set(null);
            final CnRecovery.Report done = node.on(rt -> new CnRecovery(rt).recover("cnDead"));
            assertThat(done.committedRecords()).isEqualTo(1);
            assertThat(valueOf(node, 3)).as("rolled forward").isEqualTo(777);
        }
    }

    private static long valueOf(final OneMemoryNode node, final long key) {
        return node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(key))
            + io.scythe.storage.ObjectLayout.VALUE_OFFSET);
    }
}
