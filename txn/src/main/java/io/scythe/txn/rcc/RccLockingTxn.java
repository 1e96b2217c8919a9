package io.scythe.txn.rcc;

import io.scythe.bridge.Doorbell;
import io.scythe.rrpc.RpcReply;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.OutcomeUnknownException;
import io.scythe.txn.Refusal;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * RCC's protocols on one lock word per object (NOWAIT and WAITDIE, which lock every record as they first touch it;
 * OCC, which locks only the records it writes, at commit, {@link #locksOnRead}), each stage by the primitive its
 * {@link RccForm} picks:
 * <ul>
 *   <li><b>Read</b> (OCC's unlocked reads): one READ of the object, or a READ RPC whose handler copies it. Tables
 *       transactions never write are read with one READ, no lock, in every protocol and form.</li>
 *   <li><b>Lock</b> (with the fetch): one-sided, CAS of the lock word from 0 to the owner and READ of the whole object
 *       in one doorbell, one wait (the READ's data is used only when the CAS took the word); by RPC, one request
 *       whose handler CASes the word and answers with the object ({@link RccLockService}). A word found taken is the
 *       protocol's to decide ({@link #onTaken}).</li>
 *   <li><b>Validate</b>: keys read as absent still are (header READs), and, for OCC, each record read and not locked
 *       is unchanged and not locked (a header READ each, or one VALIDATE request per memory node).</li>
 *   <li><b>Commit</b>: one-sided, per memory node one doorbell of the record WRITEs and then the unlock WRITE of
 *       each written object (only the last verb of a doorbell is signaled); by RPC, WRITE_BACK requests per memory
 *       node whose handler writes the records and releases their words.</li>
 *   <li><b>Release</b> (the words of objects only read, and every word on abort): one-sided WRITE of 0; by RPC, a
 *       request whose handler CASes each word from the owner to 0. With an RPC commit and RPC release, a memory
 *       node's read locks ride in its WRITE_BACK request.</li>
 * </ul>
 * RPC and one-sided stages take and free the same word with the same owner value, so any mix of them agrees on who
 * holds it (RCC §5.2 (3)), and the object's address, which the one-sided stages need, is known from the lookup
 * whichever primitive locked it (§5.2 (1)). <b>Log</b>: RCC's coordinator log ({@link RccLog}), after Validate,
 * to the log regions of the primary and every backup, by WRITE or by a LOG RPC as the Log digit says; the backups'
 * write-back (one-sided in every form) follows once every copy is acknowledged, then the primaries'. Recovery rolls
 * NOWAIT's, OCC's and WAITDIE's records forward ({@link RccLockKind}).
 */
public abstract class RccLockingTxn extends OneSidedTxn {
    private static final UnsafeBuffer FREE = new UnsafeBuffer(new byte[8]);

    protected final RccForm form;
    /** What this attempt's lock words hold (NOWAIT: its id; WAITDIE: its timestamp). */
    protected final long owner;
    private final int lockOffset;
    private final int kind;
    private final String mode;

    /**
     * @param owner      what the lock words take (0: this attempt's transaction id)
     * @param lockOffset the lock word's offset in the header
     * @param kind       {@link RccRpc#KIND_NOWAIT} or {@link RccRpc#KIND_WAITDIE}
     */
    protected RccLockingTxn(final TxnRuntime runtime, final RccForm form, final long owner, final int lockOffset,
                            final int kind, final String mode) {
        super(runtime);
        this.form = form;
        this.owner = owner == 0 ? id : owner;
        this.lockOffset = lockOffset;
        this.kind = kind;
        this.mode = mode;
    }

    @Override
    public final String mode() {
        return mode;
    }

    /**
     * The lock word was found taken by {@code holder} when one-sided; by RPC the memory node decided already and
     * {@code byRpc} is set. Retry with {@code again}, or fail the attempt.
     */
    protected abstract Future<Access> onTaken(Access a, long holder, boolean byRpc,
                                              java.util.function.Supplier<Future<Access>> again);

    /**
     * Checks of an object whose word this attempt just took, beyond its identity (WAITDIE: no insert in progress);
     * a failure aborts the attempt, which releases the word.
     */
    protected Future<Access> checkTaken(final Access a) {
        return Future.succeededFuture(a);
    }

    /** The lock word's offset for {@code a}: an object this attempt inserted is locked by its CAS word. */
    private int lockOffsetOf(final Access a) {
        return a.inserted ? ObjectLayout.CAS_LOCK_OFFSET : lockOffset;
    }

    private long ownerOf(final Access a) {
        return a.inserted ? id : owner;
    }

    private long lockAddress(final Access a) {
        return ObjectLayout.addressOf(a.pointer) + lockOffsetOf(a);
    }

    /**
     * Whether a record is locked as it is first read (2PL: NOWAIT, WAITDIE), or read unlocked and validated at
     * commit, where only the records written are locked (OCC).
     */
    protected boolean locksOnRead() {
        return true;
    }

    /** {@link #readOnce}, an error after a memory-node failover an abort ({@link #goneAsAbort}). */
    @Override
    public final Future<UnsafeBuffer> read(final String table, final long key) {
        return goneAsAbort(readOnce(table, key));
    }

    private Future<UnsafeBuffer> readOnce(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        if (!locksOnRead()) {
            return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::fetch));
        }
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::lockAndFetch));
    }

    /** The Read stage of an unlocked read: one READ of the object, or a READ RPC whose handler copies it. */
    private Future<Access> fetch(final Access a) {
        if (form.oneSided(RccForm.Step.READ)) {
            return readImage(a);
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.LOCK_REQUEST_BYTES]);
        request.putInt(0, a.partition.descriptor().schema().id());
        request.putLong(8, a.pointer);
        return runtime.rocket(a.partition.node()).compose(r -> r.call(RccRpc.READ, request)).compose(reply -> {
            final DirectBuffer p = payload(reply, RccRpc.LOCK_REPLY_BYTES);
            if (p.getInt(0) == RccRpc.STALE) {
                runtime.remote(a.partition).invalidate(a.key);
                return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of "
                    + a.table + " moved (stale cached address)"));
            }
            final int objectBytes = p.getInt(4);
            if (objectBytes == 0) {
                return readImage(a); // too large for a reply
            }
            a.image.putBytes(0, p, RccRpc.LOCK_REPLY_BYTES, Math.min(objectBytes, a.slotBytes()));
            return checkedImage(a);
        });
    }

    /**
     * Validation at commit: every record read and not locked is unchanged (its version the one read) and not locked
     * by another (one-sided: a header READ each; by RPC: one VALIDATE request per memory node), and every key read
     * as absent still is.
     */
    private Future<Void> validation() {
        final List<Access> unlocked = new ArrayList<>();
        for (final Access a : accesses) {
            if (!a.locked && !a.readOnlyTable() && !a.inserted) {
                unlocked.add(a);
            }
        }
        final List<Future<?>> checks = new ArrayList<>();
        checks.add(validateAbsent());
        if (form.oneSided(RccForm.Step.VALIDATE)) {
            for (final Access a : unlocked) {
                checks.add(checkHeader(a, h -> { // a throw fails the check (was readHeader(a).compose(...))
                    if (!unchangedSinceRead(a, h) || h.getLong(lockOffsetOf(a)) != 0) {
                        throw new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                            + " changed or is locked");
                    }
                }));
            }
        } else {
            for (final Map.Entry<String, List<Access>> e : byNode(unlocked).entrySet()) {
                checks.add(runtime.rocket(e.getKey()).compose(rocket -> {
                    final List<Future<?>> calls = new ArrayList<>();
                    for (final List<Access> chunk : chunks(e.getValue(), a -> RccRpc.WORD_ENTRY_BYTES,
                        rocket.maxPayload() - RccRpc.HEAD_BYTES)) {
                        calls.add(validateByRpc(e.getKey(), chunk));
                    }
                    return settle(calls);
                }));
            }
        }
        return settle(checks);
    }

    /**
     * A VALIDATE or RELEASE request: per object its table, lock word offset, pointer and {@code word} (the version
     * read, or the owner the lock word must still hold).
     */
    private UnsafeBuffer wordRequest(final List<Access> objects, final java.util.function.ToLongFunction<Access> word) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.HEAD_BYTES
            + objects.size() * RccRpc.WORD_ENTRY_BYTES]);
        request.putInt(0, objects.size());
        int at = RccRpc.HEAD_BYTES;
        for (final Access a : objects) {
            request.putInt(at, a.partition.descriptor().schema().id());
            request.putInt(at + 4, lockOffsetOf(a));
            request.putLong(at + 8, a.pointer);
            request.putLong(at + 16, word.applyAsLong(a));
            at += RccRpc.WORD_ENTRY_BYTES;
        }
        return request;
    }

    private Future<Void> validateByRpc(final String node, final List<Access> chunk) {
        final UnsafeBuffer request = wordRequest(chunk, a -> a.readVersion);
        return untilAccepted(() -> runtime.rocket(node).compose(r -> r.call(RccRpc.VALIDATE, request)))
            .compose(reply -> {
                final DirectBuffer p = payload(reply, 8);
                return p.getInt(0) == RccRpc.GRANTED ? Future.succeededFuture()
                    : Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + chunk.get(p.getInt(4))
                        .key + " of " + chunk.get(p.getInt(4)).table + " changed or is locked"));
            });
    }

    /** {@link #readForUpdateOnce}, an error after a memory-node failover an abort ({@link #goneAsAbort}). */
    @Override
    public final Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return goneAsAbort(readForUpdateOnce(table, key));
    }

    private Future<UnsafeBuffer> readForUpdateOnce(final String table, final long key) {
        return read(table, key);
    }

    /** Takes {@code a}'s lock word and fetches the object (the Lock stage). */
    protected final Future<Access> lockAndFetch(final Access a) {
        if (finished) {
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
        }
        return form.oneSided(RccForm.Step.LOCK) ? lockOneSided(a) : lockByRpc(a);
    }

    /**
     * Locks a record read before (OCC's commit): as {@link #lockAndFetch}, and its version must still be the one
     * read (DrTM+H's {@code seq} check).
     */
    private Future<Access> lockUnchanged(final Access a) {
        final long seen = a.readVersion;
        return lockAndFetch(a).compose(x -> x.readVersion == seen ? Future.succeededFuture(x)
            : Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                + " changed between its read and its lock")));
    }

    private Future<Access> lockOneSided(final Access a) {
        if (!form.doorbell()) {
            return lockThenRead(a);
        }
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(lockAddress(a), a.rkey(), 0, owner);
            batch.read(a.address(), a.rkey(), a.image, 0, a.slotBytes());
            return postLocking(a, batch, cas).map(b -> b.result(cas));
        }).compose(previous -> previous != 0 ? onTaken(a, previous, false, () -> lockAndFetch(a))
            : sameObject(a, a.image) ? took(a) : releaseStale(a));
    }

    /** {@code doorbell=off}: the CAS, a wait, then the READ and a second wait (what RCC's overlap saves). */
    private Future<Access> lockThenRead(final Access a) {
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(lockAddress(a), a.rkey(), 0, owner);
            return postLocking(a, batch, cas).map(b -> b.result(cas));
        }).compose(previous -> {
            if (previous != 0) {
                return onTaken(a, previous, false, () -> lockAndFetch(a));
            }
            return channel(a).compose(ch -> ch.read(a.address(), a.rkey(), a.image, 0, a.slotBytes()))
                .recover(e -> releaseIfOurs(a).compose(v -> Future.failedFuture(e)))
                .compose(v -> sameObject(a, a.image) ? took(a) : releaseStale(a));
        });
    }

    /**
     * Posts a doorbell whose request {@code cas} takes {@code a}'s word. Refused for now: nothing happened. Failed at
     * the CAS itself: it may have landed, and only recovery could tell, so the loop gives up. Failed after it: the
     * CAS's result tells whether the word is this attempt's, which is then let go of conditionally.
     */
    private Future<Doorbell> postLocking(final Access a, final Doorbell batch, final int cas) {
        return batch.post().recover(e -> {
            if (Refusal.forNow(e)) {
                return Future.failedFuture(e);
            }
            if (batch.failedIndex() <= cas) {
                return lockVerbInDoubt(a.partition.node(), "its lock CAS on key " + a.key + " of " + a.table + " failed after it was "
                    + "posted", e);
            }
            return (batch.result(cas) == 0 ? releaseIfOurs(a) : Future.<Void>succeededFuture())
                .compose(v -> Future.failedFuture(e));
        });
    }

    private Future<Access> lockByRpc(final Access a) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.LOCK_REQUEST_BYTES]);
        request.putInt(0, a.partition.descriptor().schema().id());
        request.putInt(4, kind);
        request.putLong(8, a.pointer);
        request.putLong(16, owner);
        return runtime.rocket(a.partition.node()).compose(r -> r.call(RccRpc.LOCK, request))
            .recover(e -> rpcMayHaveLanded(e) ? lockVerbInDoubt(a.partition.node(), "its RCC LOCK RPC on key " + a.key + " of " + a.table
                + " failed after it was sent", e) : Future.failedFuture(e))
            .compose(reply -> {
                final DirectBuffer p = payload(reply, RccRpc.LOCK_REPLY_BYTES);
                final int status = p.getInt(0);
                if (status == RccRpc.STALE) {
                    runtime.remote(a.partition).invalidate(a.key);
                    return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of "
                        + a.table + " moved (stale cached address)"));
                }
                if (status == RccRpc.BUSY) {
                    return onTaken(a, p.getLong(8), true, () -> lockAndFetch(a));
                }
                final int objectBytes = p.getInt(4);
                if (objectBytes == 0) { // too large for a reply: READ it, under the lock this attempt now holds
                    return took(a, false).compose(x -> readImage(a)).compose(this::checkTaken);
                }
                a.image.putBytes(0, p, RccRpc.LOCK_REPLY_BYTES, Math.min(objectBytes, a.slotBytes()));
                return took(a);
            });
    }

    /** The inline payload of an RCC reply of at least {@code least} bytes. */
    public static DirectBuffer payload(final RpcReply reply, final int least) {
        if (reply.mode() != RpcReply.Mode.INLINE || reply.length() < least) {
            throw new IllegalStateException("RCC reply of " + reply.length() + " bytes in mode " + reply.mode());
        }
        return reply.payload();
    }

    private Future<Access> took(final Access a) {
        return took(a, true);
    }

    /** The word is this attempt's (on the object it read): held unless the attempt is over meanwhile. */
    private Future<Access> took(final Access a, final boolean checkImage) {
        if (finished) {
            return releaseLate(a.partition.node(), () -> unlock(a))
                .compose(v -> Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over")));
        }
        a.locked = true;
        return checkImage ? checkedImage(a).compose(this::checkTaken) : Future.succeededFuture(a);
    }

    /** Whether a READ of {@code a}'s slot shows the object the attempt looked up (same incarnation). */
    private static boolean sameObject(final Access a, final DirectBuffer header) {
        return (header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) == ObjectLayout.incarnationOf(a.pointer);
    }

    /** The word was taken on a slot freed and reused since the lookup: let go of it conditionally and fail. */
    private Future<Access> releaseStale(final Access a) {
        runtime.remote(a.partition).invalidate(a.key);
        return releaseIfOurs(a).compose(v -> Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key "
            + a.key + " of " + a.table + " moved (its slot was freed and reused)")));
    }

    /** Frees the word by a CAS from the owner to 0 (a reused slot's word may be another's by now). */
    private Future<Void> releaseIfOurs(final Access a) {
        a.locked = false;
        final long address = lockAddress(a);
        final long mine = ownerOf(a);
        return releaseLate(a.partition.node(),
            () -> channel(a).compose(ch -> ch.compareAndSwap(address, a.rkey(), mine, 0)));
    }

    /** Frees a word this attempt holds: a WRITE of 0 one-sided, else a RELEASE RPC. */
    private Future<Void> unlock(final Access a) {
        if (form.oneSided(RccForm.Step.RELEASE)) {
            return channel(a).compose(ch -> ch.write(lockAddress(a), a.rkey(), FREE, 0, 8));
        }
        return releaseByRpc(a.partition.node(), List.of(a)).mapEmpty();
    }

    private Future<Integer> releaseByRpc(final String node, final List<Access> held) {
        final UnsafeBuffer request = wordRequest(held, this::ownerOf);
        return runtime.rocket(node).compose(r -> r.call(RccRpc.RELEASE, request))
            .map(reply -> payload(reply, 8).getInt(0));
    }

    /** {@link #commitOnce}, an error before its point of no return an abort ({@link #goneAsAbort}). */
    @Override
    public final Future<Long> commit() {
        return goneAsAbort(commitOnce());
    }

    private Future<Long> commitOnce() {
        if (sawDuplicate()) {
            mark(Stage.EXECUTE);
            return duplicateCommit(this::validation);
        }
        final List<Future<?>> locking = new ArrayList<>();
        locking.add(installInserts(Table.InsertLock.CAS_WORD, id, (a, inserted) -> { }));
        long version = 0;
        for (final Access a : accesses) {
            version = Math.max(version, a.readVersion + 1); // above every version read: new for every key written
            if (a.dirty && !a.locked) {
                if (locksOnRead()) {
                    throw new IllegalStateException("key " + a.key + " of " + a.table + " written without its lock");
                }
                locking.add(lockUnchanged(a));
            }
        }
        final long installed = version;
        mark(Stage.EXECUTE);
        // Lock (a duplicate insert's validation too), validate, log, write back, reclaim the record, each stage
        // marked: one object per commit (OneSidedTxn#commitChainLogged).
        return commitChainLogged(settle(locking), installed);
    }

    @Override
    protected final Future<Void> commitValidation() {
        return validation();
    }

    /** The Log stage: the redo record, past its point of no return; a WRITE that may have landed is in doubt. */
    @Override
    protected final Future<?> commitLog(final long version) {
        return RccLog.log(runtime, form, id, version, logKind(), writes.written(), this::ownerOf, configEpoch(),
            pointOfNoReturn()).map(appended -> logged = appended).recover(e -> RccLog.inDoubt(e)
                ? decidedFailure("its log record's WRITE failed and may have landed", e, version)
                    .map(v -> { // finished on the serving copies: the Commit stage has nothing left to write
                        finishedAfterFailover = true;
                        return (io.scythe.txn.recovery.RedoLog.Appended) null;
                    })
                : Future.failedFuture(e));
    }

    /** The record the Log stage made durable (null: none, or not yet). */
    private io.scythe.txn.recovery.RedoLog.Appended logged;
    /** The commit was finished on the serving copies after a failover, from its record ({@link #decidedFailure}). */
    private boolean finishedAfterFailover;

    /** The Commit stage: one-sided, or the backups' write-back then the primaries' by RPC; a failure is in doubt. */
    @Override
    protected final Future<Void> commitWriteBack(final long version) {
        if (finishedAfterFailover) {
            return Future.succeededFuture();
        }
        // Counted past its point of no return until finished, on the serving copies too (decidedFailure): a
        // failover's promoted copies stay blocked meanwhile (the fence of a stale writer, RccModule). Without a log
        // the write-back's own count ends when it fails, before that finish.
        final io.scythe.txn.Catalog catalog = runtime.catalog();
        final long epoch = configEpoch();
        catalog.decided(epoch);
        return (form.oneSided(RccForm.Step.COMMIT) ? commitOneSided(version)
            : replicated(version).compose(v -> commitByRpc(version)))
            .recover(e -> e instanceof OutcomeUnknownException || e instanceof io.scythe.txn.AbortException
                ? Future.failedFuture(e)
                : decidedFailure("its write-back failed after its log record was durable", e, version))
            .onComplete(done -> catalog.finished(epoch));
    }

    /** The record of a commit written back is reclaimed. */
    @Override
    protected final void commitWrittenBack(final Object logged) {
        RccLog.reclaim(runtime, (io.scythe.txn.recovery.RedoLog.Appended) logged);
    }

    /** The lock kind this protocol's log records name ({@link RccLog}). */
    private RccLockKind logKind() {
        return kind == RccRpc.KIND_WAITDIE ? RccLockKind.WAITDIE : locksOnRead() ? RccLockKind.NOWAIT
            : RccLockKind.OCC;
    }

    /**
     * With an RPC commit, the write-back to every backup first (one-sided WRITEs of what the primary's handler writes,
     * {@link io.scythe.txn.onesided.Replicas#writeBack}), after the log and before any primary's; the one-sided
     * commit's write set does the same itself.
     */
    private Future<Void> replicated(final long version) {
        final List<Access> written = writes.written();
        if (!io.scythe.txn.onesided.Replicas.any(written)) {
            return Future.succeededFuture();
        }
        for (final Access a : written) {
            a.installedVersion = ObjectLayout.versionAfter(version, a.readVersion);
        }
        return io.scythe.txn.onesided.Replicas.writeBack(runtime, written, writeBackFailedOn(), null);
    }

    /**
     * A failure once the commit's log record is (or may be) durable: never an abort (recovery may roll it forward).
     * After a memory-node failover whose removed node is the only one it failed on (issue 18, the package TODO's
     * third step), the commit is finished on the serving copies from its record, as the shared redo step finishes
     * one ({@code RedoStep#finishOwnRecord}: a promoted copy by versions); else what it holds stays held and the
     * commit is in doubt.
     */
    private Future<Void> decidedFailure(final String what, final Throwable cause, final long version) {
        return finishOwnRecord(cause, logged, version, logKind(), this::ownerOf, what)
            .onFailure(e -> RccLog.keepHeld(accesses));
    }

    private static boolean written(final Access a) {
        return a.dirty || a.inserted;
    }

    /**
     * One doorbell per memory node: record WRITEs, then the unlock WRITE of each written object (and of each object
     * only read, when Release is one-sided); read locks then go by RPC when Release is RPC.
     */
    private Future<Void> commitOneSided(final long version) {
        final boolean releaseOneSided = form.oneSided(RccForm.Step.RELEASE);
        final List<Access> readLocked = new ArrayList<>();
        if (!releaseOneSided) {
            for (final Access a : accesses) {
                if (a.locked && !written(a)) {
                    readLocked.add(a);
                }
            }
        }
        final Future<Void> writes = writeBack(version, a -> a.locked && (written(a) || releaseOneSided),
            (batch, a) -> batch.write(lockAddress(a), a.rkey(), FREE, 0, 8));
        return settle(List.of(writes, releaseReadLocksByRpc(readLocked)));
    }

    private Future<Void> releaseReadLocksByRpc(final List<Access> readLocked) {
        if (readLocked.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<?>> released = new ArrayList<>();
        for (final Map.Entry<String, List<Access>> e : byNode(readLocked).entrySet()) {
            for (final Access a : e.getValue()) {
                a.locked = false;
                a.releasing = true;
            }
            released.add(runtime.rocket(e.getKey()).compose(rocket -> {
                final List<Future<?>> calls = new ArrayList<>();
                for (final List<Access> chunk : chunks(e.getValue(), a -> RccRpc.WORD_ENTRY_BYTES,
                    rocket.maxPayload() - RccRpc.HEAD_BYTES)) {
                    calls.add(untilAccepted(() -> releaseByRpc(e.getKey(), chunk)));
                }
                return settle(calls);
            }).onFailure(x -> writeBackFailedOn().add(e.getKey()))); // for decidedFailure
        }
        return settle(released); // a failure: the Commit stage's (decidedFailure)
    }

    /** {@code objects} by memory node. */
    public static Map<String, List<Access>> byNode(final List<Access> objects) {
        final Map<String, List<Access>> byNode = new HashMap<>();
        for (final Access a : objects) {
            byNode.computeIfAbsent(a.partition.node(), n -> new ArrayList<>()).add(a);
        }
        return byNode;
    }

    /** {@code objects} in runs whose {@code size}s add up to at most {@code room} bytes (one RPC request each). */
    public static List<List<Access>> chunks(final List<Access> objects, final java.util.function.ToIntFunction<Access>
        size, final int room) {
        final List<List<Access>> chunks = new ArrayList<>();
        List<Access> chunk = new ArrayList<>();
        int used = 0;
        for (final Access a : objects) {
            final int bytes = size.applyAsInt(a);
            if (!chunk.isEmpty() && used + bytes > room) {
                chunks.add(chunk);
                chunk = new ArrayList<>();
                used = 0;
            }
            chunk.add(a);
            used += bytes;
        }
        if (!chunk.isEmpty()) {
            chunks.add(chunk);
        }
        return chunks;
    }

    /**
     * WRITE_BACK requests per memory node with its written objects (records, versions, releases) and, when Release
     * is RPC, its read locks; when Release is one-sided, those go as WRITEs of 0. A node's objects go in as few
     * requests as fit an RRPC bucket; a record too large for one goes first by a one-sided WRITE (value and length),
     * and its request then carries only its version and release. Past the point of no return: a request that failed
     * after it was sent is given up to recovery (which RCC's protocols do not have yet).
     */
    private Future<Void> commitByRpc(final long version) {
        final boolean releaseOneSided = form.oneSided(RccForm.Step.RELEASE);
        final List<Access> byRpc = new ArrayList<>();
        final List<Access> unlockOneSided = new ArrayList<>();
        for (final Access a : accesses) {
            if (!a.locked) {
                continue;
            }
            (written(a) || !releaseOneSided ? byRpc : unlockOneSided).add(a);
            a.locked = false; // from here nothing may release these words again
            a.releasing = true;
        }
        final List<Future<?>> sent = new ArrayList<>();
        for (final Map.Entry<String, List<Access>> e : byNode(byRpc).entrySet()) {
            sent.add(writeBackByRpc(e.getKey(), e.getValue(), version)
                .onFailure(x -> writeBackFailedOn().add(e.getKey()))); // for decidedFailure
        }
        for (final Map.Entry<String, List<Access>> e : byNode(unlockOneSided).entrySet()) {
            sent.add(untilAccepted(() -> runtime.channel(e.getKey()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                for (final Access a : e.getValue()) {
                    batch.write(lockAddress(a), a.rkey(), FREE, 0, 8);
                }
                return batch.post();
            })).onFailure(x -> writeBackFailedOn().add(e.getKey())));
        }
        return settle(sent); // a failure (it may have landed in part): the Commit stage's (decidedFailure)
    }

    private Future<Void> writeBackByRpc(final String node, final List<Access> objects, final long version) {
        return runtime.rocket(node).compose(rocket -> {
            final int room = rocket.maxPayload() - RccRpc.HEAD_BYTES;
            final List<Access> large = new ArrayList<>();
            for (final Access a : objects) {
                if (RccRpc.entryBytes(valueBytes(a)) > room) {
                    large.add(a);
                }
            }
            final Future<?> first = large.isEmpty() ? Future.succeededFuture() : untilAccepted(() ->
                runtime.channel(node).compose(ch -> {
                    final Doorbell batch = ch.doorbell();
                    for (final Access a : large) {
                        batch.write(a.address() + ObjectLayout.VALUE_OFFSET, a.rkey(), a.newValue, 0, a.newLength);
                        final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
                        length.putInt(0, a.newLength);
                        batch.write(a.address() + ObjectLayout.VALUE_LENGTH_OFFSET, a.rkey(), length, 0, 4);
                    }
                    return batch.post();
                }));
            return first.compose(v -> {
                final List<Future<?>> calls = new ArrayList<>();
                for (final List<Access> chunk : chunks(objects, a -> RccRpc.entryBytes(large.contains(a) ? 0
                    : valueBytes(a)), room)) {
                    final UnsafeBuffer request = writeBackRequest(chunk, version, large);
                    calls.add(untilAccepted(() -> runtime.rocket(node).compose(r -> r.call(RccRpc.WRITE_BACK,
                        request))).compose(reply -> payload(reply, 8).getInt(0) == RccRpc.GRANTED
                        ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException("memory node "
                        + node + " refused the write-back of transaction " + Long.toHexString(id) + ": an object "
                        + "moved or a lock word was not its own"))));
                }
                return settle(calls);
            });
        });
    }

    /** The bytes of {@code a}'s new record a write-back carries (0: none, e.g. a delete). */
    private static int valueBytes(final Access a) {
        return a.dirty && !a.deleting ? a.newLength : 0;
    }

    private UnsafeBuffer writeBackRequest(final List<Access> objects, final long version, final List<Access> large) {
        int bytes = RccRpc.HEAD_BYTES;
        for (final Access a : objects) {
            bytes += RccRpc.entryBytes(large.contains(a) ? 0 : valueBytes(a));
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[bytes]);
        request.putInt(0, objects.size());
        int at = RccRpc.HEAD_BYTES;
        for (final Access a : objects) {
            final boolean value = valueBytes(a) > 0 && !large.contains(a);
            final int length = value ? a.newLength : 0;
            int flags = value ? RccRpc.FLAG_VALUE : 0;
            if (a.deleting) {
                flags |= RccRpc.FLAG_DELETE;
            } else if (a.reviving) {
                flags |= RccRpc.FLAG_REVIVE;
            }
            if (written(a)) {
                flags |= RccRpc.FLAG_VERSION;
                a.installedVersion = ObjectLayout.versionAfter(version, a.readVersion);
            }
            at = RccRpc.putWriteBack(request, at, a.partition.descriptor().schema().id(), flags, a.pointer,
                a.installedVersion, ownerOf(a), lockOffsetOf(a), a.newValue, length);
        }
        return request;
    }


    @Override
    protected final Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD;
    }

    @Override
    public final Future<Void> abort() {
        return releaseHeld(this::unlock);
    }
}
