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

    /**
     * A partition of the one memory node with one backup copy on the same node (the copy's WRITE is the second the
     * log posts): enough to drive the replicated append's outcomes.
     */
    private Access replicatedWrite(final long key, final long value) {
        final Catalog.Partition primary = cluster.catalog.table("t").partitionOf(key);
        final Catalog.Partition partition = new Catalog.Partition(primary.node(), primary.descriptor(),
            List.of(new Catalog.Replica(primary.node(), primary.descriptor())));
        final Access a = new Access("t", key, partition);
        a.pointer = cluster.table.lookup(key);
        a.backupPointers = new long[] {a.pointer};
        a.newValue = new UnsafeBuffer(new byte[8]);
        a.newValue.putLong(0, value);
        a.newLength = 8;
        a.dirty = true;
        return a;
    }

    /** What each WRITE of the log does, in order: null lets it through, else it fails with that message. */
    private final java.util.ArrayDeque<String> writeOutcomes = new java.util.ArrayDeque<>();
    private int writes;

    private Future<RdmaChannel> scriptedChannel(final String node) {
        writes++;
        final String failure = writeOutcomes.poll();
        return failure == null || failure.isEmpty() ? cluster.rrpc.oneSided(node)
            : Future.failedFuture(new VerbException(Opcode.WRITE, failure));
    }

    private static final String REFUSED = "send queue full";

    @Test
    void shouldPostARefusedCopyOfAReplicatedRecordAgainUntilEveryCopyIsDurable() throws Exception {
        writeOutcomes.addAll(List.of("", REFUSED, REFUSED)); // the primary's copy lands; the backup's twice refused
        final long[] r = cluster.on(runtime -> {
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, this::scriptedChannel, 1L << 40,
                4 * RedoRecordDescriptor.SLOT_BYTES).timers(runtime.timers());
            return log.append(1, 10, io.scythe.txn.scythe.TakeoutLockKind.ID, List.of(replicatedWrite(1, 7)), a -> 1)
                .map(appended -> {
                    final long[] out = {appended.backups().size(), appended.firstSlot(),
                        appended.backups().get(0).firstSlot(), log.records(), writes};
                    log.release(appended);
                    return out;
                });
        });
        assertThat(r[0]).as("one backup copy").isEqualTo(1);
        assertThat(r[2]).as("in slots of its own").isNotEqualTo(r[1]);
        assertThat(r[3]).as("durable: counted once").isEqualTo(1);
        assertThat(r[4]).as("the primary's copy posted once, the backup's three times").isEqualTo(4);
    }

    @Test
    void shouldAbortAReplicatedRecordRefusedOnEveryCopyAndFreeItsSlots() throws Exception {
        writeOutcomes.addAll(List.of(REFUSED, REFUSED));
        final List<Object> r = cluster.on(runtime -> {
            // Room for one two-copy record at a time: a refusal that kept its slots would leave none for the next.
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, this::scriptedChannel, 1L << 40,
                2 * RedoRecordDescriptor.SLOT_BYTES).timers(runtime.timers());
            return log.append(1, 10, io.scythe.txn.scythe.TakeoutLockKind.ID, List.of(replicatedWrite(1, 7)), a -> 1)
                .transform(refused -> log.append(2, 10, io.scythe.txn.scythe.TakeoutLockKind.ID,
                    List.of(replicatedWrite(2, 7)), a -> 1).map(next -> {
                        log.release(next);
                        return List.<Object>of(refused.failed() && io.scythe.txn.Refusal.forNow(refused.cause()),
                            next.lsn(), next.record().getLong(RedoRecordDescriptor.LOW_WATER_OFFSET));
                    }));
        });
        assertThat(r.get(0)).as("refused on every copy: nothing anywhere, the attempt may abort").isEqualTo(true);
        assertThat(r.get(2)).as("the next record's low water is its own").isEqualTo(r.get(1));
    }

    /**
     * A copy posted by a {@link RedoLog.Poster} (RCC's Log by RPC) that the node answered it did not write leaves
     * nothing there: refused so on every copy, the record is not in doubt, its slots are free and the next record's
     * low water is its own; a poster that answers null has the copy go by the log's own WRITE, which lands.
     */
    @Test
    void shouldTreatCopiesAPosterWasToldWereNotWrittenAsNothingPosted() throws Exception {
        final List<Object> r = cluster.on(runtime -> {
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, cluster.rrpc::oneSided, 1L << 40,
                2 * RedoRecordDescriptor.SLOT_BYTES).timers(runtime.timers());
            final RedoLog.Poster notRun = (node, address, rkey, record) -> Future.failedFuture(
                new RedoLog.NotPostedException("not run", null));
            final RedoLog.Poster byWrite = (node, address, rkey, record) -> null;
            return log.append(1, 10, io.scythe.txn.scythe.TakeoutLockKind.ID, List.of(replicatedWrite(1, 7)), a -> 1,
                notRun).transform(refused -> log.append(2, 10, io.scythe.txn.scythe.TakeoutLockKind.ID,
                    List.of(replicatedWrite(2, 7)), a -> 1, byWrite).map(next -> {
                        log.release(next);
                        return List.<Object>of(refused.failed() ? refused.cause().getClass().getSimpleName() : "ok",
                            next.lsn(), next.record().getLong(RedoRecordDescriptor.LOW_WATER_OFFSET), log.records());
                    }));
        });
        assertThat(r.get(0)).as("not in doubt: nothing of it anywhere").isEqualTo("NotPostedException");
        assertThat(r.get(2)).as("the next record's low water is its own").isEqualTo(r.get(1));
        assertThat(r.get(3)).as("only the record posted by WRITE is durable").isEqualTo(1L);
    }

    /**
     * A record logged ahead (Lotus) and withdrawn by an attempt that aborts: its copies' trailers are zeroed, but a
     * copy on a memory node the configuration removed is skipped (its WRITE would fail, and the attempt then gave
     * its loop up on every MN failover). Here the one node's copies both count as removed and every WRITE to it would
     * fail: the withdraw completes without posting one and frees the record. Failed before (the failed WRITE failed
     * the withdraw). With nothing removed, both copies' trailers are written.
     */
    @Test
    void shouldWithdrawARecordWithoutWritingItsCopiesOnRemovedNodes() throws Exception {
        final Object[] r = cluster.on(runtime -> {
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, this::scriptedChannel, 1L << 40,
                8 * RedoRecordDescriptor.SLOT_BYTES).timers(runtime.timers());
            return log.append(1, 0, io.scythe.txn.lotus.LotusLockKind.ID, List.of(replicatedWrite(1, 7)), a -> 1)
                .compose(appended -> {
                    final int before = writes;
                    writeOutcomes.addAll(List.of("completed with TRANSPORT_RETRY_EXCEEDED",
                        "completed with TRANSPORT_RETRY_EXCEEDED"));
                    return log.withdraw(appended, node -> true).transform(ar -> {
                        final Object[] out = {ar.failed() ? ar.cause().toString() : "withdrawn", writes - before,
                            log.unfinishedRecords()};
                        writeOutcomes.clear();
                        return log.append(2, 0, io.scythe.txn.lotus.LotusLockKind.ID, List.of(replicatedWrite(2, 7)),
                            a -> 1).compose(next -> {
                                final int kept = writes;
                                return log.withdraw(next, node -> false).map(v -> new Object[] {out[0], out[1],
                                    out[2], writes - kept, log.unfinishedRecords()});
                            });
                    });
                });
        });
        assertThat(r[0]).as("withdrawn with every copy on a removed node").isEqualTo("withdrawn");
        assertThat(r[1]).as("WRITEs posted to removed nodes").isEqualTo(0);
        assertThat(r[2]).as("its record freed").isEqualTo(0);
        assertThat(r[3]).as("WRITEs of a withdraw with nothing removed: both copies' trailers").isEqualTo(2);
        assertThat(r[4]).isEqualTo(0);
    }

    @Test
    void shouldLeaveAReplicatedRecordInDoubtWhenACopyFailedAfterItWasPosted() throws Exception {
        writeOutcomes.addAll(List.of("", "completed with TRANSPORT_RETRY_EXCEEDED"));
        final Throwable failure = cluster.on(runtime -> {
            final RedoLog log = new RedoLog(cluster.rrpc::rocket, this::scriptedChannel, 1L << 40,
                4 * RedoRecordDescriptor.SLOT_BYTES).timers(runtime.timers());
            return log.append(1, 10, io.scythe.txn.scythe.TakeoutLockKind.ID, List.of(replicatedWrite(1, 7)), a -> 1)
                .transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : null));
        });
        assertThat(failure).as("it may have landed: never an abort").isInstanceOf(RedoLog.RecordInDoubtException.class);
        assertThat(((RedoLog.RecordInDoubtException) failure).appended().backups()).hasSize(1);
    }
}
