package io.scythe.txn.recovery;

import io.scythe.bridge.RdmaChannel;
import io.scythe.bridge.VerbException;
import io.scythe.fabric.Opcode;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.OneMemoryNode;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** A redo append refused before its WRITE was posted leaves nothing behind: slots free, low water not pinned. */
class RedoLogTest {
    private final OneMemoryNode cluster = new OneMemoryNode("t", 64);
    /** WRITEs of the log refused ("send queue full") before this many more are let through. */
    private int refusals;

    RedoLogTest() throws Exception {
    }

    @AfterEach
    void close() throws Exception {
        cluster.close();
    }

    private Access write(final long key, final long value) {
        final Catalog.Partition partition = cluster.catalog.table("t").partitionOf(key);
        final Access a = new Access("t", key, partition);
        a.pointer = cluster.table.lookup(key);
        a.newValue = new UnsafeBuffer(new byte[8]);
        a.newValue.putLong(0, value);
        a.newLength = 8;
        a.dirty = true;
        return a;
    }

    @Test
    void shouldFreeTheSlotsAndLowWaterOfARefusedAppend() throws Exception {
        final Function<String, Future<RdmaChannel>> channels = node -> refusals-- > 0
            ? Future.failedFuture(new VerbException(Opcode.WRITE, "send queue full"))
            : cluster.rrpc.oneSided(node);
        final long[] lowWaters = cluster.on(runtime -> {
            // Two slots: refusals that kept theirs would leave no room for the record that follows them.
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, channels, 1L << 40,
                2 * RedoRecordDescriptor.SLOT_BYTES);
            refusals = 3;
            Future<Void> refused = Future.succeededFuture();
            for (int i = 0; i < 3; i++) {
                final long txn = i + 1;
                refused = refused.compose(v -> log.append(txn, 10, io.scythe.txn.scythe.TakeoutLockKind.ID,
                    List.of(write(txn, 7)), a -> 1).transform(ar -> ar.failed()
                    && io.scythe.txn.Refusal.forNow(ar.cause()) ? Future.<Void>succeededFuture()
                    : Future.failedFuture(new AssertionError("append " + txn + " was not refused: " + ar))));
            }
            return refused.compose(v -> log.append(4, 10, io.scythe.txn.scythe.TakeoutLockKind.ID, List.of(write(4, 7)),
                a -> 1)).map(appended -> {
                    final long carried = appended.record().getLong(RedoRecordDescriptor.LOW_WATER_OFFSET);
                    log.release(appended);
                    return new long[] {appended.lsn(), carried, log.lowWater()};
                });
        });
        assertThat(lowWaters[1]).as("the record after the refusals carries its own lsn as low water, not theirs")
            .isEqualTo(lowWaters[0]);
        assertThat(lowWaters[2]).as("released: the low water moves past it, truncating it")
            .isEqualTo(lowWaters[0] + 1);
    }
}
