package io.scythe.txn.unsafe;

import io.scythe.txn.onesided.OneSidedTxn;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * NOT A CONCURRENCY CONTROL: reads are plain one-sided READs (locks ignored), commit takes a timestamp from the TSO
 * and writes every buffered value back with it, checking nothing. The timestamp keeps the versions it installs unique
 * (a history with two writers of one version would be rejected as impossible before any cycle is looked for), so what
 * the checker reports is the anomaly itself: two transactions that both overwrote the version they read.
 * Only for proving the history checker ({@code package-info}).
 */
public final class UnsafeTxn extends OneSidedTxn {

    public UnsafeTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    @Override
    public String mode() {
        return "unsafe";
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        return locate(table, key).compose(a -> once(a, this::readImage)).map(OneSidedTxn::valueCopy);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return read(table, key);
    }

    /** Its commit installs no inserts: refused, so a workload that inserts cannot run under it unnoticed. */
    @Override
    public void insert(final String table, final long key, final org.agrona.DirectBuffer value, final int offset,
                       final int length) {
        throw new UnsupportedOperationException("the unsafe protocol (a proof for the history checker) does not "
            + "insert");
    }

    @Override
    public void delete(final String table, final long key) {
        throw new UnsupportedOperationException("the unsafe protocol (a proof for the history checker) does not "
            + "delete");
    }

    @Override
    protected io.scythe.storage.Table.InsertLock insertLock() {
        return io.scythe.storage.Table.InsertLock.CAS_WORD; // never used: it inserts nothing
    }

    @Override
    public Future<Long> commit() {
        mark(Stage.EXECUTE);
        if (accesses.stream().noneMatch(a -> a.dirty)) {
            return finishCommit(Future.succeededFuture(0L));
        }
        return finishCommit(staged(Stage.TIMESTAMP, runtime.tso().next())
            .compose(ts -> staged(Stage.WRITE_BACK, writeBack(ts, a -> false, (batch, a) -> { })).map(ts)));
    }

    @Override
    public Future<Void> abort() {
        return releaseHeld(a -> Future.succeededFuture()); // it never holds anything
    }
}
