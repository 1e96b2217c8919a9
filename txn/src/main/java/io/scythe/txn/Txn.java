package io.scythe.txn;

import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One attempt of a transaction, as procedures see it. Reads return the value (a copy, valid for the attempt); writes
 * are buffered until {@link #commit()}. An operation that finds a conflict fails with {@link AbortException}; the
 * attempt is then over ({@link #abort()} releases what it holds) and the coordinator decides whether to retry.
 * Loop-confined: one attempt runs on one event loop.
 */
public interface Txn {
    /** The value of {@code key} in {@code table}; fails with {@link UnknownKeyException} when there is none. */
    Future<UnsafeBuffer> read(String table, long key);

    /** As {@link #read}, declaring that the attempt will write the key (FORD locks it now; others need not). */
    Future<UnsafeBuffer> readForUpdate(String table, long key);

    /**
     * As {@link #read}, marking the read key-dependent (Aurogon §4.3): its result names the key of a later request
     * of this attempt, or its own key came from an earlier read. A protocol that defers reads on hot records
     * (Aurogon's adaptive deferral, §4.2) does not defer it: the requests waiting on it at the coordinator would pay
     * the deferral, and a read whose key waited for another read was already delayed by that wait. Any other
     * protocol reads as {@link #read}.
     */
    default Future<UnsafeBuffer> readKeyDependent(final String table, final long key) {
        return read(table, key);
    }

    /** As {@link #readForUpdate}, marked key-dependent as {@link #readKeyDependent} is. */
    default Future<UnsafeBuffer> readForUpdateKeyDependent(final String table, final long key) {
        return readForUpdate(table, key);
    }

    /**
     * Whether this attempt sends a buffered write, insert or delete to its record at once (Aurogon's pre-attaching of
     * a dependent write to another record, §4.3: "issues R and then sends PW's metadata", installed PENDING, its value
     * at commit) rather than at commit. A procedure may then buffer a write right after the reads it depends on
     * instead of after all its reads (TPC-C NewOrder's inserts after the district read); for any other protocol the
     * order it buffers in is kept as it was. False by default.
     */
    default boolean sendsWritesEarly() {
        return false;
    }

    /** Buffers a new value for {@code key}, which this attempt has read. */
    void write(String table, long key, DirectBuffer value, int offset, int length);

    /** Buffers the insert of {@code key} with a value; the commit fails with AbortException when the key exists. */
    void insert(String table, long key, DirectBuffer value, int offset, int length);

    /** Buffers the delete of {@code key}, which this attempt has read; it is gone once the attempt commits. */
    void delete(String table, long key);

    /**
     * Runs {@code procedure} as this attempt's body (the coordinator's way in). A protocol that executes procedures
     * deterministically (CALVIN) may run it again, on the values it then holds locked, and completes with that run's
     * result; every other protocol runs it once, as here.
     */
    default <R> Future<R> run(final java.util.function.Function<Txn, Future<R>> procedure) {
        return procedure.apply(this);
    }

    /** Commits: fails with {@link AbortException} when it could not; the commit timestamp or version otherwise. */
    Future<Long> commit();

    /** Gives up the attempt, releasing every lock it holds. Idempotent. */
    Future<Void> abort();

    /** This attempt's transaction id, unique in the cluster, or 0 when its protocol gives it none. */
    default long id() {
        return 0;
    }

    /** The protocol and mode this attempt ran in, e.g. {@code scythe/occ}. */
    String mode();

    /**
     * Declares this attempt read-only before its first operation (the workload knows its transaction types): a
     * protocol with a lock-free read-only path (Lotus) takes it; the others ignore it.
     */
    default void declareReadOnly() {
    }

    /**
     * Declares this attempt read-only at <b>read committed</b> (Adya's PL-2: it reads only committed values; no
     * repeatable read, no serializability) before its first operation: TPC-C's StockLevel, which clause 2.8.2.3
     * allows to run so ("Full serializability and repeatable reads are not required for the Stock-Level business
     * transaction. All data read must be committed and no older than the most recently committed data prior to the
     * time this business transaction was initiated"). A protocol with such a path reports its commit with
     * {@link HistoryRecorder#committedReadCommitted}, and the history checker checks it at that level only; every
     * other protocol runs it as {@link #declareReadOnly} (serializable, which is stronger), by default. Scythe's path
     * does not yet tell a deleted key revived by an insert not yet committed from a held object (TODO scythe-rc-revive,
     * its package doc): meant for reads of tables nothing deletes (StockLevel's).
     */
    default void declareReadCommitted() {
        declareReadOnly();
    }

    /** Nanoseconds this attempt spent in each {@link Stage} (by {@link Stage#index()}), or {@code null}. */
    default long[] stageNanos() {
        return null;
    }

    /**
     * Completes when nothing this attempt started is in flight any more (reads may outlive an abort). The coordinator
     * waits for it before a retry, so that the closed loop of clients stays closed.
     */
    default Future<Void> quiesced() {
        return Future.succeededFuture();
    }
}
