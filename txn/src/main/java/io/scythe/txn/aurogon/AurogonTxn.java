package io.scythe.txn.aurogon;

import io.scythe.rrpc.RpcReply;
import io.scythe.txn.AbortException;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.HistoryRecorder;
import io.scythe.txn.NotServingException;
import io.scythe.txn.OutcomeUnknownException;
import io.scythe.txn.Stage;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.onesided.Reposts;
import io.scythe.txn.onesided.StageClock;
import io.scythe.txn.onesided.WriteSet;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One Aurogon coordinator attempt (§4.1, Algorithm 1 lines 1-21). The timestamp is taken when the attempt begins
 * ({@link AurogonClock}); every read is a READ RPC to the record's participant at that timestamp, which never fails
 * and needs no commit round; a read of a read-modify-write ({@link #readForUpdate}) carries the pre-attach flag, so
 * the participant installs the write's PENDING version before the read runs and an install failure aborts at once
 * (§4.3); the value comes at commit. A write not pre-attached (a key first read by {@link #read}, an insert, a
 * delete) is installed when it is buffered with pre-attaching on ({@link #installEarly}: right after the reads it
 * depends on), at commit with it off, one INSTALL per record (the "PW" round and its vulnerable interval, Fig. 5).
 * Commit: after every install succeeded, a COMMIT with the value to each written record and a ROLLBACK of each
 * pre-attached version the attempt did not write; abort: a ROLLBACK of every version it installed, once nothing of it
 * is in flight. A value longer than one RRPC bucket is read in parts (READ, then READ_MORE of the same version) and
 * committed in parts (STAGE requests, then the COMMIT with its tail).
 *
 * <p>Inserts install a pending version over the key's absence (INSERT at commit, or the version a pre-attached read
 * of the absent key put there); deletes commit an absence. Reads of an absent key record it ({@code readAbsent} at
 * the absence's wts) and fail with {@code UnknownKeyException}.
 *
 * <p>With backups ({@code --replicas}), the commit replicates every write to its partition's backups first and
 * waits for all of them (§4.5), then COMMITs; after the commit is reported the backups APPLY what they hold. A read
 * answered ORPHAN (parked on a version whose coordinator went silent) resolves that transaction through the backups
 * ({@link CoordinatorRecovery}) and reads again; a reply's orphan hint starts such a resolution in the background.
 *
 * <p>Key-dependent reads ({@link #readKeyDependent}) carry {@link Participant#FLAG_NO_DEFER}. The commit answers
 * after the COMMIT acknowledgements (and the backups' APPLY), where the paper answers while sending them: SPS's rule
 * 3 (§4.4) in every variant. SPS mode ({@code aurogon:sps}, {@link Techniques#sps}) adds rules 1 and 2: every READ,
 * INSTALL and INSERT carries {@link Participant#FLAG_SPS}; a read answered {@link Participant#SPS_STALE} aborts
 * ({@link AurogonAborts#SPS_STALE}) and runs again with its clock floored at the newer committed version (the paper
 * does not say how a read failing rule 1 goes on). A write refused by rule 2 is answered
 * {@link Participant#SPS_IMMORTAL} with the committed version's wts; it aborts ({@link AurogonAborts#SPS_IMMORTAL})
 * and runs again with its clock floored there, as rule 1's retry (the paper is silent on it too).
 */
final class AurogonTxn implements Txn {
    /** What one attempt runs with: the variant's techniques. */
    record Techniques(String mode, boolean preattach, boolean deferral, AurogonClock.Mode clock,
                      boolean eagerWrites, boolean sps) {
        /** Writes not pre-attached are installed at commit. */
        Techniques(final String mode, final boolean preattach, final boolean deferral, final AurogonClock.Mode clock) {
            this(mode, preattach, deferral, clock, false, false);
        }

        /** These techniques with SPS's rules on ({@link Participant#FLAG_SPS}). */
        Techniques withSps() {
            return new Techniques(mode, preattach, deferral, clock, eagerWrites, true);
        }

        /** {@link Participant#FLAG_SPS} when SPS is on, else 0: what every READ, INSTALL and INSERT carries. */
        int spsFlag() {
            return sps ? Participant.FLAG_SPS : 0;
        }
    }

    private record Key(String table, long key) {
    }

    private final TxnRuntime runtime;
    private final Techniques techniques;
    private final long id;
    private final long ts;
    private final StageClock clock;
    private final AurogonClock timestamps;
    private final List<Access> accesses = new ArrayList<>();
    private final Map<Key, Access> byKey = new HashMap<>();
    private final List<Future<?>> inFlight = new ArrayList<>();
    /** INSTALLs sent at the write ({@link Techniques#eagerWrites}), by access. */
    private final Map<Access, Future<Void>> eagerInstalls = new HashMap<>();
    private boolean finished;
    private Future<Void> aborted;
    /** The error a READ failed with (not a refusal the participant answered): the attempt cannot commit. */
    private Throwable failed;

    AurogonTxn(final TxnRuntime runtime, final Techniques techniques) {
        this.runtime = runtime;
        this.techniques = techniques;
        this.id = runtime.nextTxnId();
        this.configEpoch = runtime.catalog().epoch(); // before any partition lookup: each is of this epoch or later
        this.timestamps = AurogonClock.of(runtime, techniques.clock());
        long begun = 0;
        AbortException refused = null;
        try {
            begun = timestamps.next();
        } catch (final TwoLevelClock.Unsynchronised e) {
            refused = new AbortException(AurogonAborts.UNSYNCHRONISED, e.getMessage());
        }
        this.ts = begun;
        this.unsynchronised = refused;
        this.clock = new StageClock(runtime.timers());
        this.heartbeats = Heartbeats.of(runtime);
        if (refused == null) {
            heartbeats.begin(ts);
        } else {
            closed = true; // began nothing: no heartbeat to end
        }
    }

    /**
     * The clock refused this attempt a timestamp (2LClock past its error bound, {@link TwoLevelClock.Unsynchronised}):
     * its reads and commit fail with this abort, nothing sent.
     */
    private final AbortException unsynchronised;

    /**
     * The memory-node configuration this attempt began in: every partition it looked up (its primaries, the backups
     * its REPLICATEs and APPLYs go to) is of this epoch or a later one, so when the epoch is still this one at
     * {@link #replicate} they all are.
     */
    private final long configEpoch;
    /** Counted in {@code Catalog#decided} for {@link #configEpoch} ({@link #replicate}) until the commit ends. */
    private boolean counted;

    /** This loop's heartbeats, kept up while this attempt is open (§4.5: a live coordinator is never an orphan). */
    private final Heartbeats heartbeats;
    private boolean closed;

    /**
     * Backups that gave no answer to this attempt's decision (its DISCARD or APPLY, reposted while refused for now),
     * their node not removed: they may still hold it undecided.
     */
    private final java.util.Set<String> unanswered = new java.util.LinkedHashSet<>();
    /** The commit ended in doubt (a COMMIT failed): the loop gave up, the backups hold it until a recovery. */
    private boolean inDoubt;

    /**
     * The attempt committed, aborted or ended in doubt: it no longer needs the loop's heartbeats. When a backup did
     * not answer its decision, or it ended in doubt, its timestamp stays under the loop's low-water
     * ({@link Heartbeats#stick}): a backup that never saw it must not forget decisions past it, or it would answer
     * FORGOTTEN for it while another still holds it undecided, and every resolver would yield (review, stop 40: an
     * abort whose DISCARD was lost closed all the same). The decision is sent again every {@link Heartbeats#PERIOD_NS}
     * until every such backup answers (any status: decided there, by it or by a recovery) or is removed, at most
     * {@link #DECIDE_AGAIN_LIMIT} times (then the loop gives up, the timestamp stuck); one in doubt stays stuck (its
     * loop gave up and begins nothing more).
     */
    private void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (unanswered.isEmpty() && !inDoubt) {
            heartbeats.end(ts);
            return;
        }
        heartbeats.stick(ts);
        if (!inDoubt) {
            final int rpc = aborted != null ? AurogonRpc.DISCARD : AurogonRpc.APPLY;
            for (final String backup : List.copyOf(unanswered)) {
                decideAgain(backup, rpc);
            }
        }
    }

    /**
     * How many times a decision is sent again to a backup that does not answer it ({@link #decideAgain}, a
     * {@link Heartbeats#PERIOD_NS} apart: 16 leases) before the loop gives up.
     */
    static final int DECIDE_AGAIN_LIMIT = 64;

    /**
     * {@code rpc} (DISCARD or APPLY) at {@code backup} again, a period from now, until answered or its node removed.
     * An error reply from a live node is no answer: it may have failed part way (a backup's APPLY throwing) and still
     * hold the transaction undecided, so the timestamp stays stuck. After {@link #DECIDE_AGAIN_LIMIT} tries the loop
     * gives up ({@link TxnRuntime#giveUp}, as a lost DISCARD does at once): it begins nothing more, so the decisions
     * its backups keep pinned above its low-water stop growing (before, a commit's APPLY failing so went on being
     * sent every period for good while every later decision of the loop stayed pinned at every backup); the
     * timestamp stays stuck (a recovery decides what the backup holds).
     */
    private void decideAgain(final String backup, final int rpc) {
        decideAgain(backup, rpc, 1, runtime.timers().nowNs() + RESEND_BUDGET_NS);
    }

    private void decideAgain(final String backup, final int rpc, final int attempt, final long giveUpAtNs) {
        runtime.timers().after(Heartbeats.PERIOD_NS).compose(v -> callNode(backup, rpc, ts(0))).onComplete(ar -> {
            if (ar.failed() && !gone(ar.cause())) {
                if (mayResend(attempt, heartbeats.decideAgainLimit, runtime.timers().nowNs(), giveUpAtNs)) {
                    decideAgain(backup, rpc, attempt + 1, giveUpAtNs);
                } else {
                    runtime.giveUp("Aurogon: transaction " + Long.toHexString(id) + " at "
                        + AurogonTimestamp.toString(ts) + ": backup " + backup + " answered its "
                        + (rpc == AurogonRpc.APPLY ? "APPLY" : "DISCARD") + " with no decision " + attempt
                        + " times (" + ar.cause() + "); its timestamp stays under this loop's low-water");
                }
                return;
            }
            unanswered.remove(backup);
            if (unanswered.isEmpty()) {
                heartbeats.unstick(ts);
            }
        });
    }

    /**
     * {@code rpc} (DISCARD or APPLY) at {@code backup}, reposted while refused for now; a backup that gave no answer
     * (its node not removed) is remembered in {@link #unanswered}.
     */
    private Future<RpcReply> decideAt(final String backup, final int rpc) {
        // A DISCARD is sent again while unanswered (issue 20: a split past the call bound gave the loop up, the
        // outcome unknown, for a DISCARD that landed at the heal); an APPLY follows a reported commit and is sent
        // again by close() (decideAgain), the client not kept waiting for it.
        final UnsafeBuffer request = ts(0);
        return (rpc == AurogonRpc.DISCARD ? callUntilAnswered(backup, rpc, request)
            : Reposts.untilAccepted(runtime.timers(), () -> callNode(backup, rpc, request))).onFailure(e -> {
            if (!gone(e)) {
                unanswered.add(backup);
            }
        });
    }

    @Override
    public long id() {
        return id;
    }

    /** This attempt's timestamp: its serial order. */
    long timestamp() {
        return ts;
    }

    @Override
    public String mode() {
        return techniques.mode();
    }

    @Override
    public long[] stageNanos() {
        return clock.nanos();
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        return access(table, key, false, false);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return access(table, key, techniques.preattach(), false);
    }

    /** A READ carrying {@link Participant#FLAG_NO_DEFER}: never deferred (§4.3, key-dependent requests). */
    @Override
    public Future<UnsafeBuffer> readKeyDependent(final String table, final long key) {
        return access(table, key, false, true);
    }

    /** A pre-attaching READ (when pre-attaching is on) carrying {@link Participant#FLAG_NO_DEFER}. */
    @Override
    public Future<UnsafeBuffer> readForUpdateKeyDependent(final String table, final long key) {
        return access(table, key, techniques.preattach(), true);
    }

    /** With pre-attaching (or {@code dst-to-eager}) a write not pre-attached is installed when it is buffered. */
    @Override
    public boolean sendsWritesEarly() {
        return techniques.preattach() || techniques.eagerWrites();
    }

    /**
     * How long an attempt's reads wait on suspects left in doubt ({@link CoordinatorRecovery.InDoubt}) before it
     * aborts ({@link AurogonAborts#IN_DOUBT}); they read again every {@link #IN_DOUBT_RETRY_NS} meanwhile.
     */
    static final long IN_DOUBT_WAIT_NS = ParticipantService.ORPHAN_LEASE_NS;
    static final long IN_DOUBT_RETRY_NS = IN_DOUBT_WAIT_NS / 4;

    /** When this attempt's reads first met a suspect left in doubt (-1: never). */
    private final long[] inDoubtSinceNs = {-1};

    /**
     * A read parked on a suspect whose resolution failed with {@code e}: when it was left in doubt (a lost share no
     * surviving backup wrote: it may be committed, it may never be; a later hint, or its coordinator's APPLY on a
     * promoted copy, may yet decide it), wait {@link #IN_DOUBT_RETRY_NS} and read again, up to
     * {@link #IN_DOUBT_WAIT_NS} from the attempt's first such meeting ({@code since[0]}, -1 before); then a retryable
     * abort. Any other failure is
     * the attempt's failure as before. Before, every such reader failed with the recovery's IllegalStateException.
     */
    static Future<Void> waitInDoubt(final io.scythe.txn.runtime.Timers timers, final Throwable e,
                                    final long[] since) {
        if (!(e instanceof CoordinatorRecovery.InDoubt doubt)) {
            return Future.failedFuture(e);
        }
        final long now = timers.nowNs();
        if (since[0] < 0) {
            since[0] = now;
        }
        if (now - since[0] >= IN_DOUBT_WAIT_NS) {
            return Future.failedFuture(new AbortException(AurogonAborts.IN_DOUBT, "a read waited "
                + (now - since[0]) / 1_000 + " us on a transaction left in doubt: "
                + doubt.getMessage()));
        }
        return timers.after(IN_DOUBT_RETRY_NS);
    }

    /**
     * The READ of a key not yet accessed: pre-attaching ({@code preattach}, never on a read-only table), never
     * deferred ({@code keyDependent}); a key already accessed answers what its first access read.
     */
    private Future<UnsafeBuffer> access(final String table, final long key, final boolean preattach,
                                        final boolean keyDependent) {
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + Long.toHexString(id)
                + " is over"));
        }
        if (unsynchronised != null) {
            return Future.failedFuture(unsynchronised);
        }
        final Catalog.Table t;
        try {
            t = runtime.catalog().table(table);
        } catch (final UnknownKeyException e) {
            return Future.failedFuture(e);
        }
        Access a = byKey.get(new Key(table, key));
        if (a == null) {
            a = newAccess(table, key, t, preattach, keyDependent);
        }
        if (a.deleting) {
            return Future.failedFuture(new UnknownKeyException("key " + key + " of " + table + " is deleted"));
        }
        if (a.fetch == null) { // inserted by this attempt, never read
            return Future.succeededFuture(valueCopy(a));
        }
        return a.fetch.map(AurogonTxn::valueCopy);
    }

    private Access newAccess(final String table, final long key, final Catalog.Table t, final boolean preattach,
                             final boolean keyDependent) {
        final Access a = new Access(table, key, t.partitionOf(key));
        accesses.add(a);
        byKey.put(new Key(table, key), a);
        a.fetch = fetch(a, preattach && !a.readOnlyTable(), keyDependent);
        inFlight.add(a.fetch);
        return a;
    }

    /**
     * The READ of {@code a} (with its pre-attached write when {@code preattach}); sets what it saw before it ends.
     * A pre-attaching READ may have installed its pending version whatever came back (an error after the install, a
     * lost reply): the version counts as installed ({@code locked}, so an abort rolls it back and releases the reads
     * parked on it; rolling back nothing is a no-op) unless the participant answered that it installed nothing.
     */
    private Future<Access> fetch(final Access a, final boolean preattach, final boolean keyDependent) {
        // A read-only table's record is never written: a deferral there waits for no straggling write (§4.2 defers
        // reads so that late writes get in), so its reads bypass it, as key-dependent ones do. Without this TPC-C's
        // Zipf-hot ITEM rows cost most NewOrders a 20 us deferral, the initial value then (medium contention, 1 client
        // a loop: aurogon was below dst-to once the participant's CPU was no bottleneck); it starts at 2 us now.
        // Without the deferral technique (aurogon-pre, aurogon-2l) a pre-attaching read is not deferred either. A
        // key-dependent read (Txn#readKeyDependent) is never deferred (§4.3).
        final int defer = techniques.deferral() && !keyDependent && (preattach || !a.readOnlyTable()) ? 0
            : Participant.FLAG_NO_DEFER;
        final UnsafeBuffer request = header(a, (preattach ? Participant.FLAG_PREATTACH : 0) | defer
            | techniques.spsFlag());
        a.locked = preattach;
        final Future<RpcReply> read = call(a, AurogonRpc.READ, request).recover(e -> unansweredAbort(e, "READ", a));
        return read.onFailure(e -> failed = e).compose(reply -> {
            final UnsafeBuffer p = reply.payload();
            final int status = p.getInt(0);
            if (status == Participant.REFUSED || status == Participant.NOT_FOUND
                || status == Participant.NOT_PRIMARY || status == Participant.STALE
                || status == Participant.SPS_IMMORTAL) {
                a.locked = false; // the install was refused, no such table, or no primary there yet: nothing installed
            }
            if (status == Participant.STALE) { // at or below its id's dead mark or the tombstones' watermark
                return floored(p.getLong(8), "the pre-attaching read on " + a.partition.node());
            }
            if (status == Participant.SPS_STALE) {
                // SPS rule 1: the retry's clock is floored at the newer committed version (the answer's wts), so it
                // reads above it; else a loop lagging the writer by D retried below it until real time covered D
                // (review, stop 58). Falls through to the abort (refusal).
                timestamps.floor(p.getLong(8));
            }
            if (status == Participant.SPS_IMMORTAL) {
                timestamps.floor(p.getLong(8)); // SPS rule 2: the retry writes above the committed version
            }
            if (status == Participant.ORPHAN) {
                // Parked on a version whose coordinator may be dead: resolve it through its backups, read again.
                // A suspect left in doubt (InDoubt) is waited for, a bounded while, then the attempt aborts.
                // A recovery whose calls got no answer (a split cut the resolver off, issue 20; review of
                // aurosplit4, 6) is a retryable abort as an unanswered READ is, not the raw RpcException as an error.
                return CoordinatorRecovery.resolve(runtime, p.getLong(8), a.partition.node())
                    .recover(e -> unanswered(e) ? unansweredAbort(e, "the recovery of a suspect parked on by the READ",
                        a) : waitInDoubt(runtime.timers(), e, inDoubtSinceNs))
                    .compose(resolved -> fetch(a, preattach, keyDependent));
            }
            if (status == Participant.OK) {
                final byte[] value = new byte[p.getInt(4)];
                final int part = p.capacity() - AurogonRpc.READ_REPLY_HEADER_BYTES;
                p.getBytes(AurogonRpc.READ_REPLY_HEADER_BYTES, value, 0, part);
                final long wts = p.getLong(8);
                return readRest(a, value, part, wts).map(v -> {
                    a.held = value;
                    a.valueLength = value.length;
                    a.readVersion = wts;
                    a.fetched = true;
                    a.locked = preattach; // its pending version is installed: commit or roll it back
                    return a;
                });
            }
            if (status == Participant.ABSENT) {
                a.readAbsent = true; // what it read: no live value at readVersion
                a.readVersion = p.getLong(8);
                a.locked = preattach; // a pre-attached version over the absence: an insert commits it
                return Future.failedFuture(new UnknownKeyException("no key " + a.key + " in table " + a.table));
            }
            return Future.failedFuture(refusal(a, status, preattach ? AurogonAborts.EARLY_ABORT
                : AurogonAborts.INSTALL_REFUSED));
        });
    }

    /**
     * The rest of a value longer than one READ reply, from {@code from} on: READ_MORE of the committed version at
     * {@code wts}, part after part ({@code VERSION_GONE} when it was reclaimed meanwhile).
     */
    private Future<Void> readRest(final Access a, final byte[] value, final int from, final long wts) {
        if (from >= value.length) {
            return Future.succeededFuture();
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        fill(request, a, from);
        request.putLong(AurogonRpc.TS_OFFSET, wts);
        final Future<RpcReply> read = call(a, AurogonRpc.READ_MORE, request)
            .recover(e -> unansweredAbort(e, "READ_MORE", a)).onFailure(e -> failed = e); // as a failed READ
        return read.compose(reply -> {
            final UnsafeBuffer p = reply.payload();
            final int status = p.getInt(0);
            if (status != Participant.OK) {
                return Future.failedFuture(refusal(a, status, AurogonAborts.INSTALL_REFUSED));
            }
            final int part = p.capacity() - AurogonRpc.READ_REPLY_HEADER_BYTES;
            if (p.getInt(4) != value.length || part <= 0 || part > value.length - from) {
                return Future.failedFuture(new IllegalStateException("Aurogon READ_MORE of key " + a.key + " of "
                    + a.table + " from " + from + " answered " + part + " bytes of " + p.getInt(4) + ", expected up to "
                    + (value.length - from) + " of " + value.length));
            }
            p.getBytes(AurogonRpc.READ_REPLY_HEADER_BYTES, value, from, part);
            return readRest(a, value, from + part, wts);
        });
    }

    private Throwable refusal(final Access a, final int status, final io.scythe.txn.AbortReason refused) {
        switch (status) {
            case Participant.REFUSED:
                return new AbortException(refused, "key " + a.key + " of " + a.table + ": a read above "
                    + AurogonTimestamp.toString(ts) + " already returned the version below");
            case Participant.NOT_FOUND:
                return new UnknownKeyException("no table " + a.table + " on " + a.partition.node());
            case Participant.DUPLICATE:
                return new AbortException(io.scythe.txn.AbortReason.DUPLICATE_KEY, "key " + a.key + " of " + a.table
                    + " exists");
            case Participant.NOT_PRIMARY:
                return new AbortException(AurogonAborts.NOT_PROMOTED, "key " + a.key + " of " + a.table + ": "
                    + a.partition.node() + " does not serve that copy as primary yet (its promotion has not run)");
            case Participant.SPS_STALE:
                return new AbortException(AurogonAborts.SPS_STALE, "key " + a.key + " of " + a.table + ": a version "
                    + "newer than the one below " + AurogonTimestamp.toString(ts) + " is committed (SPS rule 1: a "
                    + "stale read)");
            case Participant.SPS_IMMORTAL:
                return new AbortException(AurogonAborts.SPS_IMMORTAL, "key " + a.key + " of " + a.table + ": a version "
                    + "above " + AurogonTimestamp.toString(ts) + " is committed (SPS rule 2: an immortal write); the "
                    + "clock is floored there");
            case Participant.TOO_OLD:
                return new AbortException(AurogonAborts.VERSION_GONE, "key " + a.key + " of " + a.table
                    + ": the version below " + AurogonTimestamp.toString(ts) + " was reclaimed");
            default:
                return new IllegalStateException("Aurogon participant answered " + status + " for key " + a.key
                    + " of " + a.table);
        }
    }

    private static UnsafeBuffer valueCopy(final Access a) {
        final UnsafeBuffer copy;
        if (a.dirty && !a.deleting) {
            copy = new UnsafeBuffer(new byte[a.newLength]);
            copy.putBytes(0, a.newValue, 0, a.newLength);
        } else {
            copy = new UnsafeBuffer(((byte[]) a.held).clone());
        }
        return copy;
    }

    @Override
    public void write(final String table, final long key, final DirectBuffer value, final int offset,
                      final int length) {
        if (finished) {
            // A procedure's callback that runs after the attempt aborted (a read that was still out when another
            // failed, say) must send nothing: its early INSTALL would land after the abort's rollbacks and stay
            // PENDING for good, a version no later reader or insert gets past (the dst-to-eager TPC-C run left not
            // quiescent, issue 20). As insert and delete.
            throw new IllegalStateException("transaction " + Long.toHexString(id) + " is over");
        }
        WriteSet.refuseReadOnly("write", table, runtime.catalog().table(table));
        final Access a = byKey.get(new Key(table, key));
        if (a == null || !(a.fetched || a.inserted)) {
            throw new IllegalStateException("write of key " + key + " of " + table + " before reading it");
        }
        if (a.deleting) {
            throw new IllegalStateException("write of deleted key " + key + " of " + table + " (insert it)");
        }
        WriteSet.setNewValue(a, value, offset, length);
        installEarly(a);
    }

    /**
     * The PW of Fig. 5 (or an insert's or delete's version) sent when it is buffered, right after the reads it
     * depends on (§4.3: "for a PW on a different record from R, Aurogon issues R and then sends PW's metadata to PW's
     * record to pre-attach it"; Algorithm 1 lines 14-15), not at commit: a PENDING version with no value, the value
     * in the COMMIT, as for a pre-attached read's. It shortens the vulnerable interval; it does not close it. With
     * pre-attaching ({@code aurogon}, {@code aurogon-pre}, {@code aurogon-2l}) and {@code dst-to-eager}; a refusal
     * aborts the attempt at commit. Not sent for a key whose own READ pre-attached it ({@code locked}).
     */
    private void installEarly(final Access a) {
        if (sendsWritesEarly() && !a.locked && !eagerInstalls.containsKey(a)) {
            final Future<Void> installed = install(a);
            eagerInstalls.put(a, installed);
            inFlight.add(installed);
        }
    }

    /**
     * Buffers an insert: at commit an INSERT installs a pending version over the key's absence (or the version this
     * attempt pre-attached over the absence it read), and fails the commit with {@code DUPLICATE_KEY} when the key
     * exists at the attempt's timestamp.
     */
    @Override
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        if (finished) {
            throw new IllegalStateException("transaction " + Long.toHexString(id) + " is over");
        }
        final Catalog.Table t = runtime.catalog().table(table);
        WriteSet.refuseReadOnly("insert", table, t);
        Access a = byKey.get(new Key(table, key));
        if (a == null) {
            a = new Access(table, key, t.partitionOf(key)); // a blind insert: nothing read
            accesses.add(a);
            byKey.put(new Key(table, key), a);
        }
        WriteSet.setNewValue(a, value, offset, length);
        if (a.deleting) {
            a.deleting = false; // deleted, then inserted again: the commit writes the value
        } else {
            a.inserted = true;
        }
        installEarly(a);
    }

    /** Buffers the delete of a key this attempt read: committed as an absence at the attempt's timestamp. */
    @Override
    public void delete(final String table, final long key) {
        if (finished) {
            throw new IllegalStateException("transaction " + Long.toHexString(id) + " is over");
        }
        WriteSet.refuseReadOnly("delete", table, runtime.catalog().table(table));
        final Access a = byKey.get(new Key(table, key));
        if (a == null || !(a.fetched || a.inserted)) {
            throw new IllegalStateException("delete of key " + key + " of " + table + " before reading it");
        }
        if (a.inserted && !a.fetched) {
            // Inserted by this attempt and deleted again: nothing to install, unless a pre-attached version exists.
            a.inserted = false;
            a.dirty = a.locked;
            a.deleting = a.locked;
            return;
        }
        a.dirty = true;
        a.deleting = true;
        a.inserted = false;
        installEarly(a);
    }

    @Override
    public Future<Long> commit() {
        clock.mark(Stage.EXECUTE);
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + Long.toHexString(id)
                + " is over"));
        }
        if (unsynchronised != null) {
            finished = true;
            return Future.failedFuture(unsynchronised);
        }
        // Writes not pre-attached are installed now (Algorithm 1's Tx_write for an independent write).
        if (failed != null) {
            // A READ failed with an error (not an abort): what it saw is unknown, so nothing of this attempt commits.
            final Throwable e = failed;
            return abort().transform(done -> Future.failedFuture(done.failed() ? done.cause() : e));
        }
        final List<Future<?>> installs = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.inserted && a.fetched) { // it read a live value: the key exists
                return abort().transform(done -> Future.failedFuture(done.failed() ? done.cause()
                    : new AbortException(io.scythe.txn.AbortReason.DUPLICATE_KEY, "key " + a.key + " of " + a.table
                    + " exists")));
            }
        }
        for (final Access a : accesses) {
            final Future<Void> eager = eagerInstalls.get(a);
            if (eager != null) {
                installs.add(eager); // sent at the write; a refusal aborts here
            } else if (a.dirty && !a.locked) {
                final Future<Void> installed = install(a);
                installs.add(installed);
                inFlight.add(installed);
            }
        }
        return clock.staged(Stage.LOCK, Reposts.settle(installs)).compose(v -> replicate()).compose(v -> decide())
            .recover(e -> e instanceof OutcomeUnknownException ? Future.failedFuture(e)
                : abort().transform(done -> Future.failedFuture(done.failed() ? done.cause() : e)))
            .onComplete(done -> {
                uncount();
                close();
            });
    }

    /** Ends {@link #replicate}'s count in {@code Catalog#decided}, once. */
    private void uncount() {
        if (counted) {
            counted = false;
            runtime.catalog().finished(configEpoch);
        }
    }

    /** The INSTALL (or INSERT) of {@code a}'s pending version: the PW of Fig. 5. */
    private Future<Void> install(final Access a) {
        final boolean inserting = a.inserted;
        final Future<RpcReply> sent = call(a, inserting ? AurogonRpc.INSERT : AurogonRpc.INSTALL,
            header(a, techniques.spsFlag()))
            .recover(e -> {
                if (io.scythe.txn.Refusal.rpcMayHaveLanded(e)) {
                    // It may have landed, or land yet (no answer, or its handler failed after installing: review of
                    // aurosplit4, 3): the abort rolls back what it installed (a no-op when nothing).
                    a.locked = true;
                }
                return unansweredAbort(e, inserting ? "INSERT" : "INSTALL", a);
            });
        return sent.compose(reply -> {
            final UnsafeBuffer p = reply.payload();
            final int status = p.getInt(0);
            if (status == Participant.OK) {
                a.locked = true;
                if (inserting) {
                    a.readAbsent = true; // it read the absence below its timestamp
                    a.readVersion = p.getLong(AurogonRpc.INSERT_BELOW_OFFSET);
                }
                return Future.succeededFuture();
            }
            if (status == Participant.STALE) {
                // Its coordinator id was told dead at or above ts on that node (this incarnation's clock restarted
                // below its predecessor's), or ts is at or below the node's tombstones' watermark (this clock lags
                // the node's newest timestamps by more than the pruning lag): floored there, runs again above it.
                return floored(p.getLong(AurogonRpc.STATUS_SEEN_OFFSET), "the install on " + a.partition.node());
            }
            if (status == Participant.SPS_IMMORTAL) {
                timestamps.floor(p.getLong(AurogonRpc.STATUS_SEEN_OFFSET)); // SPS rule 2, as a pre-attaching READ's
            }
            return Future.failedFuture(refusal(a, status, AurogonAborts.INSTALL_REFUSED));
        });
    }

    /** Past every install: the point of no return. Commits the written versions, rolls back the unwritten ones. */
    private Future<Long> decide() {
        finished = true;
        final List<Future<?>> decided = new ArrayList<>();
        for (final Access a : accesses) {
            if (!a.locked) {
                continue;
            }
            a.locked = false;
            if (a.dirty) {
                a.installedVersion = ts;
                decided.add(commitWrite(a));
            } else {
                decided.add(rollback(a));
            }
        }

        return clock.staged(Stage.WRITE_BACK, Reposts.settle(decided)).transform(ar -> {
            if (ar.failed()) {
                final String why = "transaction " + Long.toHexString(id) + " at " + AurogonTimestamp.toString(ts)
                    + " decided to commit, but a COMMIT failed: " + ar.cause();
                runtime.giveUp(why);
                inDoubt = true;
                final HistoryRecorder recorder = runtime.recorder();
                if (recorder != null) {
                    recorder.inDoubt(id, accesses);
                }
                return Future.failedFuture(new OutcomeUnknownException(why, ar.cause()));
            }
            final HistoryRecorder recorder = runtime.recorder();
            if (recorder != null) {
                recorder.committed(id, ts, accesses);
            }
            return applyBackups().map(ts);
        });
    }

    /**
     * The COMMIT of {@code a}'s version with its value: in one request when it fits one RRPC bucket; else the value's
     * first bytes are staged by STAGE requests and the COMMIT, sent once they are all acknowledged, carries the rest.
     */
    private Future<Void> commitWrite(final Access a) {
        // Answered Participant#COMMITTED_ALREADY, the version at ts is committed: a §4.5 recovery committed this
        // attempt while its coordinator was paused past the orphan lease holding every acknowledgement (every backup
        // FULL, or the lost-share path), or an earlier COMMIT of its own landed. A timestamp names one attempt, so that
        // is this commit, done, and the loop goes on (it gave up before: a compute node dropping its lease, chaos
        // cascading). NOT_PENDING, no version at ts (rolled back or never installed), stays a failed commit: in
        // doubt. (Before, a replicated coordinator took any NOT_PENDING for done, a rolled-back version too.) Not
        // covered: a version committed at ts and already reclaimed (maxVersions newer commits of the key during the
        // pause) answers NOT_PENDING too: in doubt, the loop gives up, as before without backups.
        // Reporting: the coordinator reports the commit (HistoryRecorder#committed, in decide: it alone knows what it
        // read and tells the client committed), once; a recovery that committed some of its writes reported them in
        // doubt (it cannot tell a paused coordinator from a dead one), which places the versions without counting a
        // commit, as for a coordinator paused after its own COMMITs (FIRST_SEEN).
        // Review of aurosplit4 (2): that gap under a split. A recovery commits the attempt ~1 ms into the split, other
        // compute nodes go on writing the key and its version is reclaimed (--reclaim-every 10us) before this COMMIT
        // lands at the heal: NOT_PENDING. The backups still remember the decision: one answering HOLDS with COMMITTED
        // makes the commit done (a HOLDS of a transaction held in full fences nothing, and every backup acknowledged
        // it in full before any COMMIT); any other answer leaves the failure as it was.
        return orGone(CoordinatorRecovery.commitValue(runtime, this::callUntilAnswered, a.partition.node(),
            a.partition.descriptor().schema().id(), a.key, ts, a.deleting ? null : a.newValue, a.newLength, false)
            .<Void>mapEmpty().recover(e -> e instanceof CoordinatorRecovery.NotPending
                ? committedAtABackup(a.partition.backups(), 0, e) : Future.failedFuture(e)));
    }

    /**
     * Succeeds when one of {@code backups} (from {@code i} on) answers HOLDS of this attempt COMMITTED (a recovery
     * committed it); else fails with {@code e}, the COMMIT's failure.
     */
    private Future<Void> committedAtABackup(final List<Catalog.Replica> backups, final int i, final Throwable e) {
        if (i >= backups.size()) {
            return Future.failedFuture(e);
        }
        return CoordinatorRecovery.holdsState(runtime, backups.get(i).node(), ts).transform(held ->
            held.succeeded() && held.result() == Backups.COMMITTED ? Future.<Void>succeededFuture()
                : committedAtABackup(backups, i + 1, e));
    }

    /**
     * After the primaries' COMMITs (and the commit's report): the backups apply what they hold (asynchronously in the
     * paper). A backup whose APPLY is lost keeps the transaction held until a recovery finds it durable and applies it.
     */
    private Future<Void> applyBackups() {
        final List<Future<?>> applied = new ArrayList<>();
        for (final String backup : backupNodes) {
            applied.add(orGone(decideAt(backup, AurogonRpc.APPLY).compose(reply -> expectStatus("APPLY on " + backup,
                reply))));
        }
        return Reposts.settle(applied).otherwiseEmpty();
    }

    /** The backup nodes this attempt's writes were replicated to (before any COMMIT: §4.5). */
    private final List<String> backupNodes = new ArrayList<>();

    /**
     * Replication (§4.5): every write goes to each backup of its partition (REPLICATE, in parts when long), all
     * acknowledged before any COMMIT reaches a primary; each part names the transaction's backup nodes and how many
     * writes the receiving node gets, so that a recovery can tell whether every backup holds it in full. A backup
     * that fenced the attempt (a recovery suspected it and rolled it back) refuses: the attempt aborts. Nothing to do
     * without backups.
     */
    private Future<Void> replicate() {
        final Map<String, Integer> writes = new java.util.LinkedHashMap<>();
        long mask = 0;
        for (final Access a : accesses) {
            if (a.locked && a.dirty && !counted) {
                // Issue 20/23 review, finding 1: a commit writes the copies its partitions named when it looked them
                // up, so one of an older configuration never writes a copy that rejoined since (its REPLICATEs and
                // APPLYs go to the old backups, a recovery's APPLY to holders only). Counted from here (before its
                // COMMITs) until the commit ends (its APPLYs done, or in doubt and given up: then the version it left
                // pending on a primary holds the copier off, ParticipantService#pending), so a rejoin's drain
                // (Catalog#inFlightBefore: the copier's check, each compute node's DRAINED) waits for it; counted
                // before the epoch is checked (as OneSidedTxn#writeBack), so a configuration applied meanwhile either
                // aborts it here (its pending versions rolled back, retried in the new configuration) or sees it
                // counted.
                final io.scythe.txn.Catalog catalog = runtime.catalog();
                catalog.decided(configEpoch);
                counted = true;
                if (catalog.epoch() != configEpoch) {
                    uncount();
                    return Future.failedFuture(io.scythe.txn.onesided.Reconfigured.abort(configEpoch,
                        catalog.epoch()));
                }
            }
            if (a.locked && a.dirty) {
                for (final io.scythe.txn.Catalog.Replica r : a.partition.backups()) {
                    writes.merge(r.node(), 1, Integer::sum);
                    mask |= CoordinatorRecovery.bitOf(runtime.catalog(), r.node());
                }
            }
        }
        if (writes.isEmpty()) {
            return Future.succeededFuture();
        }
        backupNodes.addAll(writes.keySet());
        final long nodes = mask;
        final List<Future<?>> sent = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked && a.dirty) {
                for (final io.scythe.txn.Catalog.Replica r : a.partition.backups()) {
                    sent.add(orGone(replicate(a, r, writes.get(r.node()), nodes)));
                }
            }
        }
        return clock.staged(Stage.LOG, Reposts.settle(sent));
    }

    private Future<Void> replicate(final Access a, final io.scythe.txn.Catalog.Replica r, final int expected,
                                   final long mask) {
        final int length = a.deleting ? 0 : a.newLength;
        return Removals.rocket(runtime, r.node()).compose(rocket -> {
            final int partBytes = rocket.maxPayload() - AurogonRpc.REPLICATE_HEADER_BYTES;
            final List<Future<?>> parts = new ArrayList<>();
            int from = 0;
            do {
                final int n = Math.min(partBytes, length - from);
                final UnsafeBuffer part = new UnsafeBuffer(new byte[AurogonRpc.REPLICATE_HEADER_BYTES + n]);
                CoordinatorRecovery.fill(part, r.descriptor().schema().id(), a.deleting ? AurogonRpc.DELETE : length,
                    a.key, ts);
                part.putInt(AurogonRpc.REPLICATE_EXPECTED_OFFSET, expected);
                part.putInt(AurogonRpc.REPLICATE_OFFSET_OFFSET, from);
                part.putLong(AurogonRpc.REPLICATE_MASK_OFFSET, mask);
                part.putLong(AurogonRpc.REPLICATE_TXN_OFFSET, id); // a recovery reports it under this id
                part.putLong(AurogonRpc.REPLICATE_LOW_OFFSET, heartbeats.lowWater(ts)); // what a backup may forget
                if (n > 0) {
                    part.putBytes(AurogonRpc.REPLICATE_HEADER_BYTES, a.newValue, from, n);
                }
                // Answered COMMITTED: a recovery suspected this coordinator (cut off past the orphan lease, its
                // REPLICATE's reply lost or late, and this a resend), found every backup holding the transaction in
                // full and committed it: decided, as every acknowledgement would have let this coordinator decide.
                // Its COMMITs find the versions COMMITTED_ALREADY (or commit them first), and it reports the commit.
                // Before (issue 20), it was answered FENCED as a rollback: the attempt aborted, its DISCARD answered
                // FENCED, and the client was told "unknown" of a commit made (money not conserved in the run's sums).
                parts.add(orGone(callUntilAnswered(r.node(), AurogonRpc.REPLICATE, part).compose(reply ->
                    reply.payload().getInt(0) == Backups.STALE
                    ? stale(r.node(), reply)
                    : reply.payload().getInt(0) == Backups.COMMITTED
                    ? Future.succeededFuture()
                    : reply.payload().getInt(0) == Backups.FENCED
                    ? Future.failedFuture(new io.scythe.txn.AbortException(AurogonAborts.FENCED, "a recovery rolled "
                    + "transaction " + AurogonTimestamp.toString(ts) + " back (its backup " + r.node() + " fenced it, "
                    + "or it was promoted)"))
                    : expectStatus("REPLICATE on " + r.node(), reply))));
                from += n;
            } while (from < length);
            return Reposts.settle(parts);
        });
    }

    /** A backup refused the REPLICATE as stale: the clock goes above what it forgot, and the attempt runs again. */
    private Future<Void> stale(final String node, final RpcReply reply) {
        return floored(reply.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET), "the REPLICATE on backup " + node);
    }

    /**
     * {@code what} was refused {@link AurogonAborts#STALE}: at or below {@code floor} (what a backup forgot, or the
     * mark its coordinator id was told dead up to there). The clock goes above it, and the attempt aborts to run again.
     */
    private <T> Future<T> floored(final long floor, final String what) {
        timestamps.floor(floor);
        return Future.failedFuture(new io.scythe.txn.AbortException(AurogonAborts.STALE, what + " of "
            + AurogonTimestamp.toString(ts) + " was refused as at or below " + AurogonTimestamp.toString(floor)
            + ": the clock is floored there"));
    }

    private Future<Void> expectStatus(final String what, final RpcReply reply) {
        final int status = reply.payload().getInt(0);
        return status == Participant.OK ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException(
            "Aurogon " + what + " at " + AurogonTimestamp.toString(ts) + " answered " + status));
    }

    private UnsafeBuffer ts(final int table) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        request.putInt(AurogonRpc.TABLE_OFFSET, table);
        request.putLong(AurogonRpc.TS_OFFSET, ts);
        return request;
    }

    @Override
    public Future<Void> abort() {
        if (aborted != null) {
            return aborted;
        }
        finished = true;
        // Nothing may be left in flight: a READ still out may yet install its pre-attached version.
        aborted = Future.join(new ArrayList<>(inFlight)).transform(settled -> {
            // Replicated (in part or in full) before it aborted: the DISCARD is marked at every backup first, one
            // after the other in node order as a recovery marks its decision (CoordinatorRecovery#mark), and the
            // pending versions are rolled back at the primaries only once every backup took it. A backup that
            // answers FENCED was APPLIED by a recovery that decided to commit (every live share held, after a
            // REPLICATE's reply was lost with a memory node): the primaries are left to that recovery's COMMITs. Review
            // (stop 45, chaos): the DISCARDs and ROLLBACKs went out together, and a ROLLBACK could land at one primary
            // under such a recovery's COMMIT of another (a partial commit).
            Future<Void> marked = Future.succeededFuture();
            for (final String backup : CoordinatorRecovery.inOrder(runtime.catalog(),
                new java.util.LinkedHashSet<>(backupNodes))) {
                marked = marked.compose(v -> orGone(decideAt(backup, AurogonRpc.DISCARD).compose(reply ->
                    reply.payload().getInt(0) == Backups.FENCED
                        ? Future.failedFuture(new AppliedByRecovery(backup))
                        : expectStatus("DISCARD on " + backup, reply))));
            }
            return marked.transform(m -> {
                if (m.failed()) {
                    // A backup did not take the DISCARD: FENCED (a recovery APPLIED it there and commits it), or no
                    // answer (one may yet). Nothing is rolled back here, and the client is told the outcome is
                    // unknown (review, stop 45: "not serving" promised it never committed, and a resend applied a
                    // transfer twice). Applied by a recovery, the transaction is that recovery's: the loop goes on,
                    // its timestamp kept under the low-water; else the loop gives up as before (its DISCARD is sent
                    // again, close()).
                    final boolean applied = m.cause() instanceof AppliedByRecovery;
                    final String why = "transaction " + Long.toHexString(id) + " at " + AurogonTimestamp.toString(ts)
                        + " aborted after replicating, but " + m.cause().getMessage();
                    inDoubt |= applied;
                    if (!applied) {
                        runtime.giveUp(why);
                    }
                    final HistoryRecorder recorder = runtime.recorder();
                    if (recorder != null) {
                        recorder.inDoubt(id, accesses);
                    }
                    return Future.failedFuture(new OutcomeUnknownException(why, m.cause()));
                }
                final List<Future<?>> rollbacks = new ArrayList<>();
                for (final Access a : accesses) {
                    if (a.locked) {
                        a.locked = false;
                        rollbacks.add(rollback(a));
                    }
                }
                // Every backup took the DISCARD: nothing of it can commit, whatever is left pending here.
                return Reposts.settle(rollbacks).recover(e -> {
                    final String why = "transaction " + Long.toHexString(id) + " could not roll back its pending "
                        + "versions: " + e;
                    runtime.giveUp(why);
                    return Future.failedFuture(new NotServingException(why, e));
                });
            });
        }).onComplete(done -> close());
        return aborted;
    }

    /** A backup answered an abort's DISCARD FENCED: a recovery APPLIED the transaction there (it commits it). */
    private static final class AppliedByRecovery extends IllegalStateException {
        AppliedByRecovery(final String backup) {
            super("backup " + backup + " answered its DISCARD FENCED: a recovery applied it (commits it)");
        }
    }

    @Override
    public Future<Void> quiesced() {
        return Future.join(new ArrayList<>(inFlight)).transform(ar -> Future.succeededFuture());
    }

    private Future<Void> rollback(final Access a) {
        return orGone(callUntilAnswered(a.partition.node(), AurogonRpc.ROLLBACK, header(a, 0))
            .compose(reply -> expectOk(a, "ROLLBACK", reply)));
    }

    private Future<Void> expectOk(final Access a, final String what, final RpcReply reply) {
        final int status = reply.payload().getInt(0);
        return status == Participant.OK ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException(
            "Aurogon " + what + " of key " + a.key + " of " + a.table + " at " + AurogonTimestamp.toString(ts)
                + " answered " + status));
    }

    private Future<RpcReply> call(final Access a, final int rpc, final UnsafeBuffer request) {
        return callNode(a.partition.node(), rpc, request);
    }

    /**
     * One request; its reply's largest timestamp seen feeds DST's clock, and its orphan hint (a transaction the node
     * suspects its coordinator left behind) starts a background resolution ({@link CoordinatorRecovery}).
     */
    private Future<RpcReply> callNode(final String node, final int rpc, final UnsafeBuffer request) {
        return Removals.call(runtime, node, rpc, request).onSuccess(reply -> {
            final UnsafeBuffer p = reply.payload();
            final boolean read = rpc == AurogonRpc.READ || rpc == AurogonRpc.READ_MORE;
            if (p.capacity() < (read ? AurogonRpc.READ_REPLY_HEADER_BYTES : AurogonRpc.STATUS_REPLY_BYTES)) {
                return;
            }
            timestamps.observe(p.getLong(read ? AurogonRpc.READ_SEEN_OFFSET : AurogonRpc.STATUS_SEEN_OFFSET));
            final long hint = p.getLong(read ? AurogonRpc.READ_HINT_OFFSET : AurogonRpc.STATUS_HINT_OFFSET);
            if (hint != 0 && hint != ts) {
                CoordinatorRecovery.hinted(runtime, hint, node);
            }
        });
    }

    /**
     * Whether {@code e} says no answer came from the request's node, still configured: no reply within the call
     * bound, or its connection broke. The request may have landed, or may land later (a network split holds it until
     * the heal, issue 20).
     */
    static boolean unanswered(final Throwable e) {
        return e instanceof io.scythe.rrpc.RpcException r && (r.code() == io.scythe.rrpc.RpcException.TIMED_OUT
            || r.code() == io.scythe.rrpc.RpcException.DISCONNECTED);
    }

    /**
     * {@code e} of a request before the point of no return ({@code what} of {@code a}): when {@link #unanswered}, a
     * retryable abort ({@link AurogonAborts#UNANSWERED}; the caller marks what it may have installed, rolled back by
     * the abort), else {@code e} as it is. Before, a READ unanswered within the bound failed its transaction with an
     * error (issue 20, a split past 4 ms).
     */
    private <T> Future<T> unansweredAbort(final Throwable e, final String what, final Access a) {
        return Future.failedFuture(unanswered(e) ? new AbortException(AurogonAborts.UNANSWERED, what + " of key "
            + a.key + " of " + a.table + " at " + AurogonTimestamp.toString(ts) + " on " + a.partition.node()
            + " got no answer: " + e.getMessage()) : e);
    }

    /**
     * How many times a decided request (COMMIT, STAGE, ROLLBACK, DISCARD) or a REPLICATE is sent while it gets no
     * answer ({@link #unanswered}), {@link Heartbeats#PERIOD_NS} apart, before its failure stands.
     */
    static final int RESEND_LIMIT = DECIDE_AGAIN_LIMIT;

    /**
     * {@code request} at {@code node}, sent again (after {@link Heartbeats#PERIOD_NS}) while it gets no answer from the
     * node still configured, up to {@link #RESEND_LIMIT} times, and reposted while refused for now: for a request
     * that may be made again whatever of it landed. A decision is final (COMMIT, its STAGEs, ROLLBACK and DISCARD are
     * idempotent at their node: a COMMIT landed answers COMMITTED_ALREADY to the next, a ROLLBACK of nothing is a
     * no-op), and a REPLICATE part a backup holds is answered by its hold. Issue 20: a split past the 4 ms call bound
     * timed a decided COMMIT out and gave the loop up with the commit in doubt, while the COMMIT, held by the split,
     * landed at the heal: the client was told "unknown" of a commit made, and the run's money was not conserved
     * (9 and 1 of 100 seeds). In the simulator's split the ring survives, so the resends queue behind the first and
     * land after it; on cluster nodes a broken ring is opened anew by the next call ({@link Removals#rocket}).
     */
    private Future<RpcReply> callUntilAnswered(final String node, final int rpc, final UnsafeBuffer request) {
        // The loop's limit (review of aurosplit4, 8): RESEND_LIMIT unless a test lowered it, as decideAgain's.
        final io.scythe.txn.runtime.Timers timers = runtime.timers();
        return untilAnswered(timers, () -> callNode(node, rpc, request), 1, heartbeats.decideAgainLimit,
            timers.nowNs() + RESEND_BUDGET_NS);
    }

    /**
     * How long a decided request is resent while unanswered before the loop gives up as it did before issue 20's
     * resends (recovery then decides through the backups). The simulator's splits need at most 64 resends of its 4 ms
     * call bound (272 ms); on cluster nodes, whose bound is longer, 64 resends of a paused memory node held a client
     * 25 s without a reply (`MemoryNodeTimeoutTest`, 400 ms bound, CI 179).
     */
    static final long RESEND_BUDGET_NS = 2_000_000_000L;

    static Future<RpcReply> untilAnswered(final io.scythe.txn.runtime.Timers timers,
                                          final java.util.function.Supplier<Future<RpcReply>> request,
                                          final int attempt, final int limit, final long giveUpAtNs) {
        return Reposts.untilAccepted(timers, request).recover(e -> !unanswered(e)
            || !mayResend(attempt, limit, timers.nowNs(), giveUpAtNs)
            ? Future.failedFuture(e)
            : timers.after(Heartbeats.PERIOD_NS).compose(v -> untilAnswered(timers, request, attempt + 1, limit,
                giveUpAtNs)));
    }

    /**
     * The one bound on sending an unanswered request again, for a decided request or REPLICATE ({@link
     * #untilAnswered}) and for a decision sent again after the attempt closed ({@link #decideAgain}): at most
     * {@code limit} sends in all, and none from {@code giveUpAtNs} ({@link #RESEND_BUDGET_NS} after the first send).
     * Before (issue 20, aurofix), decideAgain was bounded by count only: on cluster nodes, whose call bound is
     * longer, its 64 sends could run 25 s before the loop gave up. Not in {@code Reposts.untilAccepted}: that
     * reposts what a node refused for now (it answered), which is not this question and serves every protocol.
     */
    static boolean mayResend(final int attempt, final int limit, final long nowNs, final long giveUpAtNs) {
        return attempt < limit && nowNs < giveUpAtNs;
    }

    /** Whether {@code e} says the request's memory node died ({@link Removals#gone}). */
    static boolean gone(final Throwable e) {
        return e instanceof AbortException a && a.reason() == AurogonAborts.NODE_GONE;
    }

    /**
     * {@code request}, done when its node died instead: a ROLLBACK, DISCARD or APPLY there has nothing left to act on,
     * and a COMMIT or REPLICATE there is not needed (a COMMIT is sent once every backup holds the write, and the
     * promoted backup commits it at the APPLY; a dead backup is no copy any more). Its calls and Rocket lookups say
     * so themselves ({@link #callNode}, {@link Removals#rocket}); any other failure stands at once. It is an answer
     * from a live node (a FENCED REPLICATE, a status), so nothing waits for that node's removal here: it waited out
     * the whole failover wait (2.02 ms in the simulator) while the attempt's pending versions parked their readers
     * past the 1 ms call bound (issue 20's unanswered READs after another node's crash: a REPLICATE fenced by the
     * promoted copy held its transaction's abort 2 ms).
     */
    private static Future<Void> orGone(final Future<Void> request) {
        return request.recover(e -> gone(e) ? Future.succeededFuture() : Future.failedFuture(e));
    }

    private UnsafeBuffer header(final Access a, final int flags) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        fill(request, a, flags);
        return request;
    }

    private void fill(final UnsafeBuffer request, final Access a, final int flagsOrLength) {
        request.putInt(AurogonRpc.TABLE_OFFSET, a.partition.descriptor().schema().id());
        request.putInt(AurogonRpc.FLAGS_OFFSET, flagsOrLength);
        request.putLong(AurogonRpc.KEY_OFFSET, a.key);
        request.putLong(AurogonRpc.TS_OFFSET, ts);
    }
}
