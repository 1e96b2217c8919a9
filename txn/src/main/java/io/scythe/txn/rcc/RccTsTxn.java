package io.scythe.txn.rcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What RCC's timestamp protocols (MVCC, SUNDIAL) share: an RCC timestamp per attempt ({@link RccClock}), a lock word
 * per written object taken at the Lock stage and freed at Commit (with the write-back) or Release (on abort), and the
 * write-back, each stage by the primitive the {@link RccForm} picks:
 * <ul>
 *   <li><b>Commit</b> one-sided: per memory node one doorbell; per object what the protocol writes
 *       ({@link #addCommitWrites}: the version word first set BUSY, then the value, then the new version, so that a
 *       reader never takes a half-written value for a committed version), then the WRITE of 0 to its lock word when
 *       Release is one-sided too (only the last verb signaled). When Release is RPC, a RELEASE request per node
 *       follows the doorbell. By RPC: WRITE_BACK requests ({@link RccLockService}) whose handler does the same and
 *       releases the word; an object too large for a request is written one-sided.</li>
 *   <li><b>Release</b> (abort): a WRITE of 0, or a RELEASE RPC (CAS from this attempt's owner value to 0).</li>
 * </ul>
 * RPC and one-sided stages take and free the same lock word with the same owner value (RCC §5.2 (3)), and the
 * address of every object is known from its lookup whichever primitive fetched it (§5.2 (1)). <b>Log</b>: after
 * Validate, RCC's coordinator log ({@link RccLog}) to the primary's and every backup's log region, by the Log digit's
 * primitive; once every copy is acknowledged the backups are written (one-sided, in every form: the newest version's
 * value, length, flags and version, then the tuple as the primary's commit leaves it, {@link #addBackupWrites}: MVCC's
 * older slots and rts, SUNDIAL's rts), then the primaries. Recovery rolls a dead node's records forward by the RPC commit
 * ({@link RccLockKind#finishPrimary}) and frees its other words ({@link DeadWords}).
 */
public abstract class RccTsTxn extends OneSidedTxn {
    private static final UnsafeBuffer FREE = new UnsafeBuffer(new byte[8]);

    protected final RccForm form;
    protected final RccClock clock;
    private final String mode;

    protected RccTsTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime);
        this.form = form;
        this.mode = mode;
        this.clock = RccClock.of(runtime);
    }

    @Override
    public final String mode() {
        return mode;
    }

    @Override
    protected final Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD;
    }

    /** The offset of the lock word this attempt holds on {@code a} (an object it inserted: the CAS word). */
    protected abstract int lockOffset(Access a);

    /** What that word holds while this attempt has it. */
    protected abstract long lockOwner(Access a);

    /**
     * Adds, to a commit doorbell, what installs {@code a}'s new version (without the release): the version word BUSY
     * first, the value and what else the protocol keeps, the new version last.
     */
    protected abstract void addCommitWrites(Doorbell batch, Access a);

    /**
     * Adds, to the write-back batch of one of {@code a}'s backups (its copy at {@code address}, {@code rkey}), after
     * the shared writes of the newest version (value, length, flags, version), the rest of the tuple as the primary's
     * commit leaves it (issue 18: MVCC's older version slots and rts, SUNDIAL's rts), so that a promoted backup serves
     * the versions and leases the primary served. Never a lock word: backups have none.
     */
    protected abstract void addBackupWrites(Doorbell batch, Access a, long address, int rkey);

    /** The WRITE_BACK flags beyond VALUE, DELETE, REVIVE and VERSION that {@code a}'s commit by RPC needs. */
    protected abstract int commitFlags(Access a);

    /** Bytes one READ of {@code a}'s tuple takes. */
    protected int tupleBytes(final Access a) {
        return a.slotBytes();
    }

    /** The largest value of {@code a}'s table. */
    protected static int max(final Access a) {
        return a.partition.descriptor().schema().maxValueBytes();
    }

    /**
     * {@code bytes}, a tuple of {@code a}'s table with {@code protocol}'s state after the value ({@code state}),
     * once its objects are known to have room for it (Protocol#objectRoom, set up by the memory nodes).
     */
    protected static int withRoom(final Access a, final int bytes, final String protocol, final String state) {
        final var d = a.partition.descriptor();
        if (d.objects().length() / d.schema().capacity() < bytes) {
            throw new IllegalStateException(protocol + ": table " + a.table + " has no room for " + state + " in "
                + "its objects (its memory nodes were not set up for " + protocol + ": Protocol#objectRoom)");
        }
        return bytes;
    }

    /** A read, an error after a memory-node failover an abort ({@link #goneAsAbort}, as RccLockingTxn's). */
    @Override
    public final Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return goneAsAbort(readOnlyRead(table, key));
        }
        return goneAsAbort(readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::fetch)));
    }

    /** A locking read, an error after a memory-node failover an abort ({@link #goneAsAbort}). */
    @Override
    public final Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return goneAsAbort(readOnlyRead(table, key));
        }
        return goneAsAbort(readVia(table, key, this::lockOnce));
    }

    /** {@code a}'s lock, taken once (concurrent operations of the attempt on one key share it). */
    @SuppressWarnings("unchecked")
    protected final Future<Access> lockOnce(final Access a) {
        if (a.locked) {
            return Future.succeededFuture(a);
        }
        if (a.held instanceof Future<?> f && !f.failed()) {
            return (Future<Access>) f;
        }
        final Future<Access> locking = lock(a);
        a.held = locking;
        return locking;
    }

    /** The Read stage of {@code a}, in its form's primitive. */
    private Future<Access> fetch(final Access a) {
        return form.oneSided(RccForm.Step.READ) ? readOneSided(a) : readByRpc(a);
    }

    /** The Lock stage of {@code a}, in its form's primitive (none once the attempt is over). */
    private Future<Access> lock(final Access a) {
        if (finished) {
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
        }
        return form.oneSided(RccForm.Step.LOCK) ? lockOneSided(a) : lockByRpc(a);
    }

    /** Reads {@code a} with one-sided verbs (its rules checked). */
    protected abstract Future<Access> readOneSided(Access a);

    /** Reads {@code a} by RPC (its rules checked by the memory node). */
    protected abstract Future<Access> readByRpc(Access a);

    /** Locks {@code a} with one-sided verbs and reads it under the lock. */
    protected abstract Future<Access> lockOneSided(Access a);

    /** Locks {@code a} by RPC, its reply carrying the tuple. */
    protected abstract Future<Access> lockByRpc(Access a);

    /**
     * Two READs of {@code a}'s tuple in one doorbell, the first into its image ({@link #tupleImage}), the second into
     * a fresh buffer; once the first shows the object looked up ({@link #sameObject}), {@code then} compares them (a
     * tuple read atomically when they agree) and goes on.
     */
    protected final Future<Access> readTwice(final Access a,
                                             final java.util.function.BiFunction<UnsafeBuffer, UnsafeBuffer,
                                                 Future<Access>> then) {
        final int bytes = tupleBytes(a);
        final UnsafeBuffer first = tupleImage(a);
        final UnsafeBuffer second = new UnsafeBuffer(new byte[bytes]);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            batch.read(a.address(), a.rkey(), first, 0, bytes);
            batch.read(a.address(), a.rkey(), second, 0, bytes);
            return batch.post();
        }).compose(b -> sameObject(a, first)).compose(v -> then.apply(first, second));
    }

    /**
     * The commit's stages: inserts installed (then {@code afterInserts}), the write set locked (records read before
     * and written now), then in Validate the absent bounds raised to {@code ts} and {@code validate}, then the
     * write-back installing {@code ts} (read once each stage begins: what the earlier stages made it); completes
     * with {@code ts}.
     */
    protected final Future<Long> commitInStages(final java.util.function.Supplier<Future<Void>> afterInserts,
                                                final java.util.function.LongSupplier ts,
                                                final java.util.function.Supplier<Future<Void>> validate) {
        if (sawDuplicate()) {
            mark(io.scythe.txn.Stage.EXECUTE);
            return duplicateCommit(this::validateAbsent);
        }
        final List<Future<?>> locking = new ArrayList<>();
        locking.add(installInserts(Table.InsertLock.CAS_WORD, id, (a, inserted) -> { })
            .compose(v -> afterInserts.get()));
        for (final Access a : accesses) {
            if (a.dirty && !a.locked) {
                locking.add(lockOnce(a)); // read before, written now (RCC's write set, locked at commit)
            }
        }
        mark(io.scythe.txn.Stage.EXECUTE);
        // An error before the point of no return after a memory-node failover is an abort (goneAsAbort); past it the
        // write-back's failures are decidedFailure's.
        return goneAsAbort(finishCommit(staged(io.scythe.txn.Stage.LOCK, settle(locking))
            .compose(v -> {
                // The timestamp is final once locked (SUNDIAL's commit.tts rises with each lock and insert); nothing
                // carrying it is written before this point (issue 18: the published bound covers every one written).
                final AbortException beyond = beyondBound(ts.getAsLong());
                return beyond != null ? Future.failedFuture(beyond) : staged(io.scythe.txn.Stage.VALIDATE,
                    raiseAbsentBounds(ts.getAsLong()).compose(x -> validate.get()));
            })
            .compose(v -> {
                final long version = ts.getAsLong();
                for (final Access a : accesses) {
                    if (a.dirty || a.inserted) {
                        a.installedVersion = version; // above every version and read of it
                    }
                }
                return staged(io.scythe.txn.Stage.LOG, RccLog.log(runtime, form, id, version, logKind(),
                    writes.written(), this::lockOwner, configEpoch(), pointOfNoReturn())
                    .map(appended -> logged = appended)).recover(e -> RccLog.inDoubt(e) ? decidedFailure("its log "
                    + "record's WRITE failed and may have landed", e)
                    .map(done -> { // finished on the serving copies: nothing left to write back
                        finishedAfterFailover = true;
                        return (io.scythe.txn.recovery.RedoLog.Appended) null;
                    }) : Future.failedFuture(e));
            })
            .compose(appended -> staged(io.scythe.txn.Stage.WRITE_BACK, countedWriteBack())
                .onSuccess(v -> RccLog.reclaim(runtime, appended)))
            .map(v -> ts.getAsLong())));
    }

    /** The record the Log stage made durable (null: none, or not yet). */
    private io.scythe.txn.recovery.RedoLog.Appended logged;
    /** The commit was finished on the serving copies after a failover, from its record ({@link #decidedFailure}). */
    private boolean finishedAfterFailover;

    /**
     * {@link #writeBack}, counted past its point of no return until finished ({@code Catalog#decided}), on the serving
     * copies too ({@link #decidedFailure}): a failover's promoted copies stay unsettled meanwhile, so no old
     * configuration's write lands on them after RccModule#promotedSettling floored their rts (as RccLockingTxn).
     */
    private Future<Void> countedWriteBack() {
        if (finishedAfterFailover) {
            return Future.succeededFuture();
        }
        final io.scythe.txn.Catalog catalog = runtime.catalog();
        final long epoch = configEpoch();
        catalog.decided(epoch);
        return writeBack().recover(e -> e instanceof io.scythe.txn.OutcomeUnknownException
                || e instanceof AbortException ? Future.failedFuture(e)
                : decidedFailure("its write-back failed and may have landed in part", e))
            .onComplete(done -> catalog.finished(epoch));
    }

    /**
     * Why a commit at {@code ts} may not go on, or null: above the bound its compute node published (cluster mode,
     * issue 18 R1, {@link RccClock#withinBound}, which asks for a larger one). A timestamp it wrote (an rts, a lease's
     * renewal, an absent bound, a version) could order it after a read a memory node's settling does not floor above
     * once this node is down; so it aborts before writing one, and is retried.
     */
    protected final AbortException beyondBound(final long ts) {
        return clock.withinBound(ts) ? null : new AbortException(RccClock.BEYOND_BOUND, "timestamp "
            + Long.toHexString(ts) + " above its compute node's published clock bound");
    }

    protected static AbortException abort(final AbortReason reason, final Access a, final String why) {
        return new AbortException(reason, "key " + a.key + " of " + a.table + ": " + why);
    }

    /** Whether a READ of {@code a}'s slot shows the object the attempt looked up (same incarnation). */
    protected final Future<Void> sameObject(final Access a, final DirectBuffer header) {
        if ((header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) == ObjectLayout.incarnationOf(a.pointer)) {
            return Future.succeededFuture();
        }
        runtime.remote(a.partition).invalidate(a.key);
        return Future.failedFuture(abort(AbortReason.VALIDATION, a, "moved (its slot was freed and reused)"));
    }

    /** {@code a}'s image, at least a whole tuple. */
    protected final UnsafeBuffer tupleImage(final Access a) {
        if (a.image == null || a.image.capacity() < tupleBytes(a)) {
            a.image = new UnsafeBuffer(new byte[tupleBytes(a)]);
        }
        return a.image;
    }

    /**
     * The lock word of {@code a} was just taken for this attempt: held, unless the attempt is over meanwhile (then it
     * is freed again, and the attempt fails).
     */
    protected final Future<Access> held(final Access a) {
        if (finished) {
            return releaseLate(a.partition.node(), () -> unlock(a)).compose(v -> Future.failedFuture(new AbortException(
                AbortReason.LOCKED, "attempt over")));
        }
        a.locked = true;
        return Future.succeededFuture(a);
    }

    /** Takes the word back after a failed check under it, and fails with {@code why}. */
    protected final <T> Future<T> releaseAndFail(final Access a, final AbortException why) {
        a.locked = false;
        return releaseLate(a.partition.node(), () -> unlock(a)).compose(v -> Future.failedFuture(why));
    }

    /** Frees a word this attempt holds: a WRITE of 0 one-sided, else a RELEASE RPC (CAS from its owner to 0). */
    protected final Future<Void> unlock(final Access a) {
        if (form.oneSided(RccForm.Step.RELEASE)) {
            return channel(a).compose(ch -> ch.write(ObjectLayout.addressOf(a.pointer) + lockOffset(a), a.rkey(),
                FREE, 0, 8));
        }
        return releaseByRpc(a.partition.node(), List.of(a)).mapEmpty();
    }

    private Future<Integer> releaseByRpc(final String node, final List<Access> held) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.HEAD_BYTES
            + held.size() * RccRpc.WORD_ENTRY_BYTES]);
        request.putInt(0, held.size());
        int at = RccRpc.HEAD_BYTES;
        for (final Access a : held) {
            request.putInt(at, a.partition.descriptor().schema().id());
            request.putInt(at + 4, lockOffset(a));
            request.putLong(at + 8, a.pointer);
            request.putLong(at + 16, lockOwner(a));
            at += RccRpc.WORD_ENTRY_BYTES;
        }
        return runtime.rocket(node).compose(r -> r.call(RccRpc.RELEASE, request))
            .map(reply -> RccLockingTxn.payload(reply, 8).getInt(0));
    }

    @Override
    public final Future<Void> abort() {
        return releaseHeld(this::unlock);
    }

    /** A new 8-byte buffer holding {@code word}. */
    protected static UnsafeBuffer word(final long word) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, word);
        return b;
    }

    /**
     * Installs every written object ({@code installedVersion} set) and frees every lock word this attempt holds, by
     * the Commit and Release digits. Past the point of no return: a failure leaves the outcome unknown.
     */
    protected final Future<Void> writeBack() {
        final List<Access> written = writes.written();
        if (!io.scythe.txn.onesided.Replicas.any(written)) {
            return writeBackPrimaries();
        }
        // The backups first (one-sided WRITEs of the newest version: value, length, flags, version; no lock word;
        // then the protocol's tuple state as the primary's commit leaves it, addBackupWrites), every one completed
        // before any primary is written and released.
        return io.scythe.txn.onesided.Replicas.writeBack(runtime, written, writeBackFailedOn(), (batch, a, b) ->
                addBackupWrites(batch, a, io.scythe.storage.ObjectLayout.addressOf(a.backupPointers[b]),
                    a.partition.backups().get(b).descriptor().objects().rkey()))
            .compose(v -> writeBackPrimaries()); // a failure: countedWriteBack's (decidedFailure)
    }

    /** The lock kind this protocol's log records name ({@link RccLog}). */
    protected abstract RccLockKind logKind();

    /**
     * A failure once the commit's log record is (or may be) durable: never an abort (recovery may roll it forward).
     * After a memory-node failover whose removed node is the only one it failed on (issue 18), the commit is finished
     * on the serving copies from its record ({@code RedoStep#finishOwnRecord}, as RccLockingTxn's): a live primary by
     * this protocol's own roll-forward while its token holds (MVCC's older-slot move, SUNDIAL's rts), a promoted copy
     * by versions, which the backups-first write-back already gave the whole tuple (MVCC's older slots, SUNDIAL's rts
     * = wts; RccModule#promotedSettling floors rts after). Else what it holds stays held and the commit is in doubt.
     */
    private Future<Void> decidedFailure(final String what, final Throwable cause) {
        return finishOwnRecord(cause, logged, installedVersion(), logKind(), this::lockOwner, what)
            .onFailure(e -> RccLog.keepHeld(accesses));
    }

    /** The version this commit installs (every written object's; 0: none written). */
    private long installedVersion() {
        for (final Access a : accesses) {
            if (a.dirty || a.inserted) {
                return a.installedVersion;
            }
        }
        return 0;
    }

    /** {@link #writeBack}'s part on the primaries: each object installed and every lock word freed. */
    private Future<Void> writeBackPrimaries() {
        final List<Access> held = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                held.add(a);
                a.locked = false; // from here nothing may release these words again
                a.releasing = true;
            }
        }
        final List<Future<?>> sent = new ArrayList<>();
        for (final Map.Entry<String, List<Access>> e : RccLockingTxn.byNode(held).entrySet()) {
            if (form.oneSided(RccForm.Step.COMMIT)) {
                sent.add(commitOneSided(e.getKey(), e.getValue())
                    .onFailure(x -> writeBackFailedOn().add(e.getKey()))); // for decidedFailure
                continue;
            }
            sent.add(runtime.rocket(e.getKey()).compose(rocket -> {
                final int room = rocket.maxPayload() - RccRpc.HEAD_BYTES;
                final List<Access> large = new ArrayList<>();
                final List<Access> small = new ArrayList<>();
                for (final Access a : e.getValue()) {
                    (RccRpc.entryBytes(valueBytes(a)) > room ? large : small).add(a);
                }
                final List<Future<?>> calls = new ArrayList<>();
                if (!large.isEmpty()) { // too large for a request: written one-sided, whatever the code
                    calls.add(commitOneSided(e.getKey(), large));
                }
                for (final List<Access> chunk : RccLockingTxn.chunks(small, a -> RccRpc.entryBytes(valueBytes(a)),
                    room)) {
                    final UnsafeBuffer request = writeBackRequest(chunk);
                    calls.add(untilAccepted(() -> runtime.rocket(e.getKey()).compose(r -> r.call(RccRpc.WRITE_BACK,
                        request))).compose(reply -> RccLockingTxn.payload(reply, 8).getInt(0) == RccRpc.GRANTED
                        ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException("memory node "
                        + e.getKey() + " refused the write-back of transaction " + Long.toHexString(id)))));
                }
                return settle(calls);
            }).onFailure(x -> writeBackFailedOn().add(e.getKey()))); // for decidedFailure
        }
        return settle(sent); // a failure (it may have landed in part): countedWriteBack's (decidedFailure)
    }

    /** One doorbell to {@code node}: each object's install, then its release when Release is one-sided; else RPC. */
    private Future<?> commitOneSided(final String node, final List<Access> objects) {
        final boolean releaseOneSided = form.oneSided(RccForm.Step.RELEASE);
        final Future<?> written = untilAccepted(() -> runtime.channel(node).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            for (final Access a : objects) {
                if (a.dirty || a.inserted) {
                    addCommitWrites(batch, a);
                }
                if (releaseOneSided) {
                    batch.write(ObjectLayout.addressOf(a.pointer) + lockOffset(a), a.rkey(), FREE, 0, 8);
                }
            }
            return batch.size() == 0 ? Future.succeededFuture() : batch.post();
        }));
        return releaseOneSided ? written : written.compose(v -> untilAccepted(() -> releaseByRpc(node, objects)));
    }

    /**
     * Orders this attempt's reads of absent keys before any later insert of them: raises each such table's absent
     * bound (in its index region, {@link io.scythe.storage.TableDescriptor#absentBoundAddress}) to {@code ts}, by a CAS
     * retried from the value it found, before the absences are validated. A memory node creates every new object at
     * a version above the bound, and RCC's inserters commit above their object's version, so an insert that lands
     * after the raise commits above {@code ts}, and one that landed before it is seen by the validation (which then
     * aborts). A key's absence has no tuple, so no rts of its own: the bound is one per table, an rts for every key
     * missing from it (conservative: an insert of any key of the table then goes above {@code ts}). RCC's workloads
     * read no absent keys and the paper says nothing of it; the CAS is one-sided in every form.
     */
    protected final Future<Void> raiseAbsentBounds(final long ts) {
        final Map<String, io.scythe.txn.Catalog.Partition> tables = new java.util.LinkedHashMap<>();
        for (final Access a : reads.absent()) {
            if (reads.find(a.table, a.key) == null) {
                tables.putIfAbsent(a.partition.node() + "/" + a.table, a.partition);
            }
        }
        final List<Future<?>> raised = new ArrayList<>();
        for (final io.scythe.txn.Catalog.Partition p : tables.values()) {
            raised.add(raiseBound(p, 0, ts));
        }
        return settle(raised);
    }

    private Future<Void> raiseBound(final io.scythe.txn.Catalog.Partition p, final long seen, final long ts) {
        if (seen >= ts) {
            return Future.succeededFuture();
        }
        return runtime.channel(p.node()).compose(ch -> ch.compareAndSwap(p.descriptor().absentBoundAddress(),
            p.descriptor().index().rkey(), seen, ts)).compose(found -> found == seen ? Future.<Void>succeededFuture()
            : raiseBound(p, found, ts));
    }

    /** The bytes of {@code a}'s new value a write-back carries (0: none, e.g. a delete, or only a release). */
    protected static int valueBytes(final Access a) {
        return a.dirty && !a.deleting ? a.newLength : 0;
    }

    private UnsafeBuffer writeBackRequest(final List<Access> objects) {
        int bytes = RccRpc.HEAD_BYTES;
        for (final Access a : objects) {
            bytes += RccRpc.entryBytes(valueBytes(a));
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[bytes]);
        request.putInt(0, objects.size());
        int at = RccRpc.HEAD_BYTES;
        for (final Access a : objects) {
            final int length = valueBytes(a);
            int flags = length > 0 ? RccRpc.FLAG_VALUE : 0;
            if (a.deleting) {
                flags |= RccRpc.FLAG_DELETE;
            } else if (a.reviving) {
                flags |= RccRpc.FLAG_REVIVE;
            }
            if (a.dirty || a.inserted) {
                flags |= RccRpc.FLAG_VERSION | commitFlags(a);
            }
            at = RccRpc.putWriteBack(request, at, a.partition.descriptor().schema().id(), flags, a.pointer,
                a.installedVersion, lockOwner(a), lockOffset(a), a.newValue, length);
        }
        return request;
    }

    /**
     * The shared part of a one-sided commit of {@code a} at {@code version}, after the protocol's own first WRITEs:
     * the version word BUSY, value and length, flags of a delete or revival, then the new version.
     */
    protected static void addInstall(final Doorbell batch, final Access a, final long previous, final long version) {
        final long address = ObjectLayout.addressOf(a.pointer);
        batch.write(address + ObjectLayout.VERSION_OFFSET, a.rkey(), word(previous | ObjectLayout.VERSION_BUSY), 0,
            8);
        if (a.dirty && !a.deleting) {
            batch.write(address + ObjectLayout.VALUE_OFFSET, a.rkey(), a.newValue, 0, a.newLength);
            final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
            length.putInt(0, a.newLength);
            batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, a.rkey(), length, 0, 4);
        }
        if (a.deleting || a.reviving) {
            final UnsafeBuffer flags = new UnsafeBuffer(new byte[2]);
            flags.putShort(0, (short) (a.deleting ? ObjectLayout.FLAG_DELETED : 0));
            batch.write(address + ObjectLayout.FLAGS_OFFSET, a.rkey(), flags, 0, 2);
        }
        batch.write(address + ObjectLayout.VERSION_OFFSET, a.rkey(), word(version), 0, 8);
    }

}
