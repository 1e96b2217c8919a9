package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.onesided.Inserts;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * What SELCC's transactions share, on the cache ({@link SelccTxn}) and on SEL's eager latches ({@link Sel2plTxn}).
 * Under 2PL a read takes Shared, {@code readForUpdate} takes Exclusive (upgrading a key held Shared), the commit first
 * upgrades every key written but held Shared. Under TO and OCC ({@link Mode}) the rules are here, one piece of code
 * for both substrates ({@link #optimisticCommit}, {@link #readLate}, {@link #writeLate}, {@link #markAbsent}); how a
 * latch is taken for the moment of a read, held by the commit, and how the writes are installed is each substrate's.
 * Every mode inserts at commit ({@link #insertions}) and deletes by writes that leave a tombstone.
 */
abstract class LatchTxn extends OneSidedTxn {
    /** Concurrency control on the latches (SELCC §6.4), with its protocol's name on SELCC's cache and on SEL. */
    enum Mode {
        /** Two-phase locking, no wait: the latches are the transaction's locks, held to the commit. */
        TWO_PL("selcc-2pl", "sel-2pl"),
        /**
         * Basic timestamp ordering: a timestamp from the TSO counter at the first access; a read latches the line
         * Exclusive for the moment it checks {@code wts <= ts} and raises {@code rts} (a write of the line: the
         * invalidations the paper names as TO's cost on the cache); the commit latches its writes Exclusive (no
         * wait), checks {@code ts >= rts} and {@code ts >= wts} of each, then installs them with {@code wts = ts}.
         * A key read as missing from the index is created by the commit as a tombstone carrying {@code rts = ts}
         * ({@link #markAbsent}), so that an older transaction's insert of it fails.
         */
        TO("selcc-to", "sel-to"),
        /**
         * Optimistic: a read latches the line Shared for the moment it copies it; the commit latches its writes
         * Exclusive (no wait), latches each other line read Shared again to check its version (the paper's second
         * latch per tuple), then installs.
         */
        OCC("selcc-occ", "sel-occ");

        /** The protocol's name on SELCC's cache. */
        final String label;
        /** The protocol's name on SEL (latches released eagerly, no cache). */
        final String selLabel;

        Mode(final String label, final String selLabel) {
            this.label = label;
            this.selLabel = selLabel;
        }
    }

    /**
     * TO's per-object room after the value ({@code Protocol#objectRoom}): {@code rts}, then {@code wts}, the
     * timestamps of the latest reader and writer; on the cache part of the line, flushed and forwarded with it.
     */
    static final int TO_ROOM = 16;

    protected final Mode mode;
    /** TO: this attempt's timestamp, taken at its first access. */
    private Future<Long> timestamp;
    /** TO: the keys read as absent that the commit creates as tombstones carrying its {@code rts} ({@link #markAbsent}). */
    private List<Inserts.PendingKey> marks;

    LatchTxn(final TxnRuntime runtime, final Mode mode) {
        super(runtime);
        this.mode = mode;
    }

    /** The LOCKED abort of the access to {@code a}, saying {@code why} (each substrate counts or not). */
    protected abstract <T> Future<T> locked(Access a, String why);

    /**
     * A bounded retry of a latch, the same rule on both substrates: {@code again} once {@code wait} completes, unless
     * this was the last of {@code limit} rounds ({@code tries} counted from 0) or the attempt is over: then it aborts
     * (LOCKED, {@code why}); an attempt over goes on for as long as it takes when {@code whileOver} (its abort must
     * latch an object its INSERT created, to bury it).
     */
    protected final Future<Access> retried(final Access a, final int tries, final int limit, final boolean whileOver,
                                           final java.util.function.Supplier<String> why,
                                           final java.util.function.Supplier<Future<Void>> wait,
                                           final java.util.function.Supplier<Future<Access>> again) {
        if (finished ? !whileOver : tries + 1 >= limit) {
            return locked(a, why.get());
        }
        return wait.get().compose(v -> again.get());
    }

    /** Takes Shared on {@code a} (not held yet) and reads it. */
    protected abstract Future<Access> lockShared(Access a);

    /** Takes Exclusive on {@code a} (not held yet) and reads it. */
    protected abstract Future<Access> lockExclusive(Access a);

    /** Upgrades {@code a}, held Shared, to Exclusive. */
    protected abstract Future<Void> upgrade(Access a);

    /** Whether this attempt holds {@code a} Exclusive. */
    protected abstract boolean exclusive(Access a);

    @Override
    public final Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<UnsafeBuffer> notYet = SelccModule.notYet(runtime);
        if (notYet != null) {
            return notYet;
        }
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::lockShared));
    }

    @Override
    public final Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<UnsafeBuffer> notYet = SelccModule.notYet(runtime);
        if (notYet != null) {
            return notYet;
        }
        return readVia(table, key, this::forUpdate);
    }

    /** {@code a} (located) held Exclusive: taken, or upgraded from Shared, after its read if one is in flight. */
    protected final Future<Access> forUpdate(final Access a) {
        if (a.fetch != null && !a.fetch.isComplete()) {
            return a.fetch.compose(this::forUpdate);
        }
        if (a.locked && exclusive(a)) {
            return Future.succeededFuture(a);
        }
        if (a.locked) {
            return upgrade(a).map(a);
        }
        a.fetch = lockExclusive(a);
        return a.fetch;
    }

    /** The commit's lock phase: every key written but held Shared is upgraded (after its read, if in flight). */
    protected final Future<Void> upgradeWrites() {
        mark(Stage.EXECUTE);
        final List<Future<Void>> upgrades = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty && a.locked && !exclusive(a)) {
                upgrades.add(a.fetch != null && !a.fetch.isComplete() ? a.fetch.compose(x -> upgrade(x))
                    : upgrade(a));
            }
        }
        return staged(Stage.LOCK, settle(upgrades));
    }

    /**
     * The commit, one for both substrates: an attempt that {@link #sawDuplicate} is decided by
     * {@link #duplicateValidation} (once: {@code duplicateCommit} finishes it); else 2PL's {@link #lockingCommit} or
     * TO's and OCC's {@link #optimisticCommit}, finished once ({@code finishCommit}). The duplicate's branch was inside
     * {@code optimisticCommit}, itself finished by the caller: its abort ran twice (issue 21, stop 50's review).
     */
    @Override
    public final Future<Long> commit() {
        if (sawDuplicate()) {
            mark(Stage.EXECUTE); // as Ford's, RCC's and Scythe's: the validation below is not execution
            return duplicateCommit(() -> staged(Stage.VALIDATE, duplicateValidation()));
        }
        return finishCommit(mode == Mode.TWO_PL ? lockingCommit() : optimisticCommit());
    }

    /**
     * 2PL's commit (finished by {@link #commit}), the same on both substrates: every key written but held Shared
     * upgraded, then the inserts ({@link #insertions}), then the keys read absent validated, then the installs and
     * the releases ({@link #installAndRelease}); an object its INSERT created is installed (version + 1) and its CAS
     * word cleared before its latch is let go.
     */
    private Future<Long> lockingCommit() {
        return upgradeWrites()
            .compose(v -> staged(Stage.LOCK, insertions()))
            .compose(v -> staged(Stage.VALIDATE, validateAbsent()))
            .compose(v -> installAndRelease(0)).map(0L);
    }

    /**
     * Whether what this attempt read is still current, so that a {@code DUPLICATE_KEY} it met may be reported (else
     * it was met through a stale read: {@code VALIDATION}, retried). In every mode each key read absent is looked up
     * past the cache ({@link #validateAbsentNothingInserted}: marks and keys with a pending insert included, since no
     * INSERT is posted once a duplicate is seen): a missing key has no latch, so not even 2PL holds it (review of
     * selfix, finding 1: t1 reads 3, reads 50 absent, inserts 51 blind; t2 inserts 50 and 51 and commits; t1's
     * duplicate on 51 has no serial order, t1 must see 50). OCC's lines read are checked again ({@link
     * #validateReads}); 2PL's are latched. TO checks no line read again: each was read at or below its timestamp
     * and a later write does not make it stale in timestamp order (finding 2: T at 5 reads x, T' at 9 writes x
     * and commits, T's duplicate on a key written at or below 5 is one at its timestamp); its live duplicate keys
     * are checked by {@link #presentAtTimestamp} instead. A key read absent and found present is VALIDATION in TO
     * too, even if its {@code wts} is past {@code ts} (where absent at {@code ts} would be legal): conservative,
     * an abort is always allowed.
     */
    private Future<Void> duplicateValidation() {
        final Future<Void> absent = validateAbsentNothingInserted();
        return mode == Mode.OCC ? absent.compose(v -> validateReads(0)) : absent;
    }

    /**
     * TO: each key this commit's insert found live ({@code live}, latched Exclusive) was present at this attempt's
     * timestamp, so that its duplicate is one in timestamp order: a {@code wts} past {@code ts} means it was written
     * (inserted) after, and at {@code ts} the insert would have found it absent or older: a read too late, aborted
     * ({@code VALIDATION}, retried), not a user-visible duplicate. Nothing under 2PL and OCC.
     */
    private Future<Void> presentAtTimestamp(final List<Access> live) {
        if (mode != Mode.TO || live.isEmpty()) {
            return Future.succeededFuture();
        }
        return timestamp().compose(ts -> firstLate(live, a -> readLate(a, wts(a), ts)));
    }

    /** TO: the first of {@code accesses} that {@code late} finds too late (its abort), or success if none. */
    private static Future<Void> firstLate(final List<Access> accesses,
                                          final java.util.function.Function<Access, AbortException> late) {
        for (final Access a : accesses) {
            final AbortException why = late.apply(a);
            if (why != null) {
                return Future.failedFuture(why);
            }
        }
        return Future.succeededFuture();
    }

    /** Objects this attempt's INSERTs created (CAS-locked with its id), latched Exclusive by the commit or the abort. */
    protected List<Access> created;

    /** Whether {@code a} is an object this attempt's INSERT created. */
    protected final boolean created(final Access a) {
        return created != null && created.contains(a);
    }

    /**
     * Whether the image of {@code a} (just read under a latch) is an object another attempt's INSERT created and has
     * not committed yet (its CAS word still set): never used, the access aborts instead ({@link #uncommitted}).
     */
    protected final boolean insertedByAnother(final Access a) {
        return a.image.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0 && !created(a);
    }

    /** The abort of an access that found {@link #insertedByAnother}. */
    protected static <T> Future<T> uncommitted(final Access a) {
        LineCache.Stats.count("abort: inserted by a transaction not committed yet");
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key + " of " + a.table
            + ": inserted by a transaction not committed yet"));
    }

    /** Latches {@code a}, a key in the index this attempt inserts, Exclusive until the commit (2PL: {@link #forUpdate}). */
    private Future<Access> latchPresent(final Access a) {
        return mode == Mode.TWO_PL ? forUpdate(a) : latchWrite(a);
    }

    /**
     * Latches {@code a}, an object this attempt's INSERT created, Exclusive, waiting for whoever holds its latch word
     * for a moment (no transaction holds a CAS-locked object: a read of it aborts before it uses it); gives up after
     * a bounded number of tries unless the attempt is over (its abort must bury the object, so it waits as long as it
     * takes).
     */
    protected abstract Future<Access> latchCreated(Access a);

    /**
     * The commit's inserts, every written line latched already (the same in every SELCC and SEL protocol): a key in
     * the index is latched Exclusive ({@link #latchPresent}) and revived over its tombstone (or found live: a
     * duplicate: {@code DUPLICATE_KEY} only once what the attempt read is current, {@link #duplicateValidation} and
     * TO's {@link #presentAtTimestamp}, else {@code VALIDATION}); the others are created by the memory nodes' INSERTs,
     * CAS-locked with this attempt's id (the memory node refuses a key whose latch word is held), then latched
     * Exclusive ({@link #latchCreated}). An aborted insert is buried under its latch (a tombstone, CAS word cleared),
     * never ABANDONed: that frees a slot that other compute nodes may still cache or be latching.
     */
    protected final Future<Void> insertions() {
        final List<Inserts.PendingKey> pending = inserts.pending();
        if (pending.isEmpty()) {
            return Future.succeededFuture();
        }
        final Future<Void> notYet = SelccModule.notYet(runtime); // before any INSERT: its object must be latched
        if (notYet != null) {
            return notYet;
        }
        final List<Future<Void>> present = new ArrayList<>(pending.size());
        final List<Access> live = new ArrayList<>(0);
        for (final Inserts.PendingKey p : pending) {
            present.add(locate(p.table(), p.key()).compose(this::latchPresent).transform(found -> {
                if (found.succeeded()) {
                    if (readAbsentOnly(p.table(), p.key())) {
                        return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + p.key() + " of "
                            + p.table() + " read as absent is in the index now"));
                    }
                    LineCache.Stats.count("insert over an object");
                    if (!found.result().deleted) {
                        live.add(found.result()); // a duplicate: foldInto records it
                    }
                    inserts.foldInto(p.table(), p.key());
                    return Future.succeededFuture();
                }
                return found.cause() instanceof UnknownKeyException ? Future.succeededFuture()
                    : Future.failedFuture(found.cause());
            }));
        }
        return settle(present).compose(v -> {
            if (inserts.duplicate() != null) {
                return duplicateOnlyIfCurrent(Future.failedFuture(new AbortException(AbortReason.DUPLICATE_KEY,
                    inserts.duplicate())),
                    () -> within(Stage.VALIDATE, presentAtTimestamp(live).compose(x -> duplicateValidation())));
            }
            created = new ArrayList<>(2);
            return installInserts(insertLock(), id, (a, inserted) -> {
                a.image = new UnsafeBuffer(new byte[a.slotBytes()]);
                a.inserted = false; // undone under its latch (buried), never by ABANDON
                created.add(a);
                LineCache.Stats.count("insert created");
            }).recover(e -> e instanceof AbortException x && x.reason() == AbortReason.DUPLICATE_KEY
                // created since this attempt found it missing: its absence was stale, retried
                ? Future.failedFuture(new AbortException(AbortReason.VALIDATION, e.getMessage()))
                : Future.failedFuture(e));
        }).compose(v -> {
            final List<Future<Access>> latched = new ArrayList<>(created.size());
            for (final Access a : List.copyOf(created)) {
                latched.add(latchCreated(a));
            }
            return settle(latched);
        });
    }

    @Override
    protected final Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD; // the INSERTs create the object CAS-locked with the attempt id
    }

    /** TO: this attempt's timestamp (one FAA on the TSO counter, the paper's Atomic), taken once. */
    protected final Future<Long> timestamp() {
        if (timestamp == null) {
            timestamp = runtime.tso().next();
        }
        return timestamp;
    }

    /** TO's read rule: why reading {@code a}, last written at {@code wts}, at {@code ts} is too late, or null. */
    protected static AbortException readLate(final Access a, final long wts, final long ts) {
        return wts > ts ? new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
            + " was written at " + wts + ", after this transaction's timestamp " + ts) : null;
    }

    /**
     * TO's {@code rts} rule: a read at {@code ts} (or a mark, {@link #markAbsent}) of a line whose {@code rts} is
     * {@code rts} raises it to {@code ts}, never lowers it: whether it raises.
     */
    static boolean raisesRts(final long rts, final long ts) {
        return rts < ts;
    }

    /** TO: the {@code rts} of {@code a}, latched Exclusive by this attempt (read with the latch). */
    protected abstract long rts(Access a);

    /** TO: the {@code wts} of {@code a}, latched Exclusive by this attempt (read with the latch). */
    protected abstract long wts(Access a);

    /** TO's write rule: why writing {@code a} (latched Exclusive) at {@code ts} is too late ({@code ts < rts} or {@code wts}), or null. */
    protected final AbortException writeLate(final Access a, final long ts) {
        return writeLate(a, rts(a), wts(a), ts);
    }

    /**
     * TO's write rule on its values: why writing {@code a}, last read at {@code rts} and written at {@code wts}, at
     * {@code ts} is too late ({@code ts < rts} or {@code ts < wts}), or null.
     */
    static AbortException writeLate(final Access a, final long rts, final long wts, final long ts) {
        if (ts < rts || ts < wts) {
            return new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table + " was read at "
                + rts + " or written at " + wts + ", after this transaction's timestamp " + ts);
        }
        return null;
    }

    /** TO and OCC: takes Exclusive on {@code a} and holds it to the commit, the image READ again. */
    protected abstract Future<Access> latchWrite(Access a);

    /** OCC validation: {@code a} latched Shared for the moment its image is READ again (its version recorded). */
    protected abstract Future<Access> readAgain(Access a);

    /** TO: what the reads' {@code rts} raises still need to land before the commit's record (none by default). */
    protected Future<Void> rtsLanded() {
        return Future.succeededFuture();
    }

    /**
     * TO: the marks ({@link #markAbsent}), latched Exclusive, left tombstones with {@code rts = ts} and let go
     * ({@link #buryMark}, each substrate's), before the commit's record: they are no writes, neither in the record nor
     * in the history (for the history each is only a lookup: the absent read is its own access, its bound).
     */
    private Future<Void> marked(final long ts) {
        if (marks == null) {
            return Future.succeededFuture();
        }
        final List<Future<Void>> buried = new ArrayList<>(marks.size());
        for (final Access a : List.copyOf(accesses)) {
            if (marker(a)) {
                a.fetched = false;
                a.readAbsent = false;
                LineCache.Stats.count("absent key marked");
                buried.add(buryMark(a, ts));
            }
        }
        return marksBuried(buried);
    }

    /** TO: buries the mark {@code a} (latched Exclusive) with {@code rts = ts} unless higher already. */
    protected abstract Future<Void> buryMark(Access a, long ts);

    /** TO: what {@link #marked} waits for once every mark's {@link #buryMark} started: they all settled, by default. */
    protected Future<Void> marksBuried(final List<Future<Void>> buried) {
        return settle(buried);
    }

    /** The decided commit's writes installed ({@code wts = ts} under TO) and every latch let go. */
    protected abstract Future<Void> installAndRelease(long ts);

    /** TO: a commit with nothing to write, its reads checked as they ran, is over. */
    protected void readOnlyCommitted() {
    }

    /**
     * TO and OCC: every line written latched Exclusive (no wait while holding: a conflict aborts), its version still
     * the one read; then the inserts ({@link #insertions}: keys in the index latched Exclusive and revived, missing
     * ones created and latched); TO checks {@code ts >= rts, wts} of each line written, OCC then latches each other
     * line read Shared again and checks its version; the keys read absent must still be missing; then the writes are
     * installed and every latch let go ({@link #installAndRelease}). A delete is a write that leaves a tombstone.
     */
    private Future<Long> optimisticCommit() {
        mark(Stage.EXECUTE);
        if (mode == Mode.TO) {
            markAbsent();
        }
        final List<Access> written = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty) {
                written.add(a);
            }
        }
        if (written.isEmpty() && inserts.pending().isEmpty() && mode == Mode.TO) {
            // Its reads were checked as they ran; a key read absent must still be missing.
            return rtsLanded().compose(v -> validateAbsent()).map(v -> {
                readOnlyCommitted();
                return 0L;
            });
        }
        final Future<Long> ts = mode == Mode.TO ? timestamp() : Future.succeededFuture(0L);
        return ts.compose(t -> staged(Stage.LOCK, latchWrites(written, 0, t)
                .compose(v -> insertions()).compose(v -> revivalsChecked(written, t))))
            .compose(v -> staged(Stage.VALIDATE, (mode == Mode.OCC ? validateReads(0)
                : Future.<Void>succeededFuture()).compose(x -> validateAbsent())))
            .compose(v -> ts).compose(t -> rtsLanded().compose(x -> marked(t)).map(t))
            .compose(this::installAndRelease).map(0L);
    }

    /**
     * TO: each key this attempt read as absent from the index (and neither inserts nor otherwise touched) becomes a
     * pending insert of its own (a "mark"): the commit creates it like any insert (the INSERT proves it still missing,
     * as {@code validateAbsent} would; found in the index now, the attempt aborts) and {@link #marked} leaves it a
     * tombstone whose {@code rts} is this attempt's timestamp. Without it a read of a missing key raised no {@code rts}
     * anywhere, and a later insert of it by an older transaction passed: write skew through the absent key (issue 21,
     * the phantom workload's G2: each read the other's missing key, both committed).
     */
    private void markAbsent() {
        for (final Access r : reads.absent()) {
            if (inserts.ownValue(r.table, r.key) != null || reads.find(r.table, r.key) != null
                || readAbsentOnly(r.table, r.key)) {
                continue; // inserted by this attempt (its INSERT checks it), or touched since, or marked already
            }
            final io.scythe.txn.Catalog.Partition partition = runtime.catalog().table(r.table).partitionOf(r.key);
            final int length = partition.descriptor().schema().fixedSize()
                ? partition.descriptor().schema().maxValueBytes() : 0;
            inserts.insert(r.table, r.key, new UnsafeBuffer(new byte[length]), 0, length);
            if (marks == null) {
                marks = new ArrayList<>(2);
            }
            marks.add(new Inserts.PendingKey(r.table, r.key));
        }
    }

    /**
     * Whether the pending insert of {@code key} only marks a key this attempt read as absent ({@link #markAbsent}):
     * found in the index now, the absence it read is stale and the attempt aborts.
     */
    protected final boolean readAbsentOnly(final String table, final long key) {
        return marks != null && marks.contains(new Inserts.PendingKey(table, key));
    }

    /** Whether {@code a} is an object created by {@link #markAbsent}'s insert. */
    protected final boolean marker(final Access a) {
        return marks != null && created(a) && readAbsentOnly(a.table, a.key);
    }

    /**
     * TO: each key the inserts revived (latched by {@link #insertions}, not in {@code written}) checked as a write, and
     * so is each object they created but a mark: the memory node's INSERT revives a tombstone in place, its
     * {@code rts} and {@code wts} kept (sel-to phantom seeds 13, 19, 29, 47, 51, 95 of 100: a newer transaction read
     * the tombstone as absent, raising its {@code rts}, and an older one's INSERT revived it unchecked: G2). A mark's
     * own INSERT may revive a tombstone too: its locate answers from this attempt's absent reads, so a key inserted and
     * deleted since it was read absent is not seen in the index; a {@code wts} past {@code ts} there means versions
     * this attempt may have had to read (an insert at or below {@code ts} deleted after it): the mark aborts as a read
     * too late (review of sel-to: T1 at 10 reads k absent, T_a at 5 inserts k and writes x, T_b at 20 deletes k, T1
     * reads x and commits: a cycle T_a -> T1 -> T_a). A tombstone written at or below {@code ts} is what T1 reads.
     */
    private Future<Void> revivalsChecked(final List<Access> written, final long ts) {
        return mode != Mode.TO ? Future.succeededFuture() : firstLate(accesses,
            a -> a.dirty && !written.contains(a) || created(a) && !marker(a) ? writeLate(a, ts)
                : marker(a) ? readLate(a, wts(a), ts) : null);
    }

    /** Latches {@code written[i..]} Exclusive in turn, each still at the version read (TO: ts at or past its stamps). */
    private Future<Void> latchWrites(final List<Access> written, final int i, final long ts) {
        if (i == written.size()) {
            return Future.succeededFuture();
        }
        final Access a = written.get(i);
        final long read = a.readVersion;
        final UnsafeBuffer mine = a.newValue;
        final int length = a.newLength;
        final boolean wasDeleted = a.deleted;
        return latchWrite(a).compose(x -> {
            // The latch READ the line into the image again: what this attempt read is the version it saw then.
            x.newValue = mine;
            x.newLength = length;
            x.dirty = true;
            if (x.readVersion != read) {
                return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + x.key + " of "
                    + x.table + " was written since this transaction read it"));
            }
            x.readVersion = read;
            x.deleted = wasDeleted;
            final AbortException late = mode == Mode.TO ? writeLate(x, ts) : null;
            return late != null ? Future.failedFuture(late) : latchWrites(written, i + 1, ts);
        });
    }

    /** OCC validation: each line read but not written latched Shared for the moment its version is compared. */
    private Future<Void> validateReads(final int i) {
        if (i == accesses.size()) {
            return Future.succeededFuture();
        }
        final Access a = accesses.get(i);
        if (a.dirty || !a.fetched || a.locked) {
            return validateReads(i + 1);
        }
        final long read = a.readVersion;
        return readAgain(a).compose(x -> {
            final boolean same = x.readVersion == read;
            x.readVersion = read;
            return same ? validateReads(i + 1) : Future.failedFuture(new AbortException(AbortReason.VALIDATION,
                "key " + x.key + " of " + x.table + " was written since this transaction read it"));
        });
    }
}
