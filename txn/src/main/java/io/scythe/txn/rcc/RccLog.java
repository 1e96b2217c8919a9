package io.scythe.txn.rcc;

import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Replicas;
import io.scythe.txn.recovery.RedoLog;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;
import java.util.function.ToLongFunction;

/**
 * RCC's Log stage (§4.1, the coordinator log of FaSST and DrTM+H): after validation and before any write reaches a
 * memory node, the commit's record (every written object's new value and version, and where it lies on the primary
 * and each backup) goes to the loop's log region on the first written object's primary node and on each of that
 * partition's backup nodes ({@link RedoLog}: with k backups, k + 1 copies); the commit is decided when every copy is
 * acknowledged, and only then do the backups' and primaries' write-backs begin (backups first, {@link Replicas}).
 *
 * <ul>
 *   <li>One-sided Log digit: one WRITE per copy (RCC's preferred primitive, "logging strongly prefers one-sided
 *       WRITE").</li>
 *   <li>RPC Log digit: per copy a LOG request ({@link RccRpc#LOG}) whose handler copies the record into the region
 *       ({@link RccLockService}); a record larger than a request goes by WRITE.</li>
 *   <li>Reclamation is lazy, as in RCC: the record's slots are freed locally once the write-back completed, and the
 *       low water that the loop's next records carry truncates it for recovery ({@link RedoLog}). RCC notifies the
 *       backups by RPC instead; here nothing is sent, the next record says it.</li>
 * </ul>
 * Written when the loop keeps a redo log (the simulator's and the bench's {@code --redo-log}, cluster nodes always),
 * as for every other protocol. The records carry RCC's lock kinds ({@link RccLockKind}), which say how recovery rolls
 * each protocol's records forward (and {@link DeadWords} frees the words no record names).
 * <p>Deviations from RCC: the record goes to the log regions of the first written object's partition (its primary
 * and backups), not to each written record's backups; and the backups are then updated in place (one more one-sided
 * round before the primaries' write-back, counted in the Write-back stage), where RCC, FaSST and DrTM+H let the
 * backups apply their log. Both keep one recovery path (the redo log's) for every protocol here.
 */
public final class RccLog {
    private RccLog() {
    }

    /**
     * Locates {@code written} on their backups, then logs the commit at {@code version}; completes with the record
     * ({@code null}: the loop keeps no log, or nothing is written), durable on every copy. The record names
     * {@code epoch}, the memory-node configuration the attempt began in ({@code OneSidedTxn#configEpoch}), as the
     * one-sided protocols' records do: not the one applied when it is encoded (after the locate, possibly newer than
     * the terms its locks were taken in, so that recovery would trust a newer primary's lock word for it).
     * {@code gate} ({@code OneSidedTxn#pointOfNoReturn}) runs just before the record's WRITE is posted.
     */
    static Future<RedoLog.Appended> log(final TxnRuntime runtime, final RccForm form, final long id,
                                        final long version, final RccLockKind kind, final List<Access> written,
                                        final ToLongFunction<Access> token, final long epoch,
                                        final RedoLog.PointOfNoReturn gate) {
        final Future<Void> located = Replicas.any(written) ? Replicas.locateAll(runtime, written)
            : Future.succeededFuture();
        final RedoLog log = RedoLog.of(runtime);
        if (log == null || written.isEmpty()) {
            return located.map((RedoLog.Appended) null);
        }
        // A record too large for a request goes by the log's own one-sided WRITE (the poster answers null).
        final RedoLog.Poster poster = form.oneSided(RccForm.Step.LOG) ? null : (node, address, rkey, record) ->
            RccRpc.LOG_HEAD_BYTES + record.capacity() > runtime.maxRpcPayload() ? null
                : runtime.rocket(node).compose(rocket -> {
                    final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.LOG_HEAD_BYTES + record.capacity()]);
                    request.putLong(0, address);
                    request.putInt(8, rkey);
                    request.putInt(12, record.capacity());
                    request.putBytes(RccRpc.LOG_HEAD_BYTES, record, 0, record.capacity());
                    return rocket.call(RccRpc.LOG, request)
                        // An RPC answered as not run wrote nothing: the copy is not posted, not in doubt.
                        .recover(e -> Future.failedFuture(io.scythe.txn.Refusal.forNow(e)
                            || io.scythe.txn.Refusal.rpcMayHaveLanded(e) ? e
                            : new RedoLog.NotPostedException("RCC LOG to " + node + " not run: " + e.getMessage(), e)))
                        .compose(reply -> RccLockingTxn.payload(reply, 8).getInt(0) == RccRpc.GRANTED
                            ? Future.<Void>succeededFuture() : Future.failedFuture(new RedoLog.NotPostedException(
                                "memory node " + node + " refused RCC LOG of " + record.capacity() + " bytes at "
                                    + Long.toHexString(address) + ": no log region of rkey " + rkey + " holds it",
                                null)));
                });
        return located.compose(v -> log.append(id, version, kind.id(), written, token, poster, epoch, gate));
    }

    /** Frees {@code appended}'s slots (lazily truncated by the next records): its write-back completed. */
    static void reclaim(final TxnRuntime runtime, final RedoLog.Appended appended) {
        if (appended != null) {
            RedoLog.of(runtime).release(appended);
        }
    }

    /**
     * The commit failed once its record is (or may be) durable: never an abort (recovery may roll it forward), so
     * nothing of what it holds may be released by the attempt's abort; the words stay the record's.
     */
    static void keepHeld(final List<Access> accesses) {
        for (final Access a : accesses) {
            a.locked = false;
        }
    }

    /** Whether {@code failure} of the Log stage leaves the record possibly durable (the commit in doubt). */
    static boolean inDoubt(final Throwable failure) {
        return failure instanceof RedoLog.RecordInDoubtException;
    }
}
