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
 * (§4.3); the value comes at commit. A write not pre-attached (pre-attaching off, or a key first read by
 * {@link #read}) is installed at commit, one INSTALL per record (the "PW" round and its vulnerable interval, Fig. 5).
 * Commit: after every install succeeded, a COMMIT with the value to each written record and a ROLLBACK of each
 * pre-attached version the attempt did not write; abort: a ROLLBACK of every version it installed, once nothing of it
 * is in flight. A value longer than one RRPC bucket is read in parts (READ, then READ_MORE of the same version) and
 * committed in parts (STAGE requests, then the COMMIT with its tail).
 *
 * <p>Inserts install a pending version over the key's absence (INSERT at commit, or the version a pre-attached read
 * of the absent key put there); deletes commit an absence. Reads of an absent key record it ({@code readAbsent} at
 * the absence's wts) and fail with {@code UnknownKeyException}.
 *
 * <p>Not built yet (issue 20), each a documented gap: replication to
 * backups before the commit (none: commit goes to the primaries only), the recovery of a dead coordinator's pending
 * versions (a read parked on one waits until the run ends), SPS mode, key-dependent deferral bypass as a request
 * flag of the {@code Txn} API (the wire flag exists: {@link Participant#FLAG_NO_DEFER}). The commit answers after the
 * COMMIT acknowledgements, where the paper answers while sending them.
 */
final class AurogonTxn implements Txn {
    /** What one attempt runs with: the variant's techniques. */
    record Techniques(String mode, boolean preattach, boolean deferral, AurogonClock.Mode clock) {
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
    private boolean finished;
    private Future<Void> aborted;
    /** The error a READ failed with (not a refusal the participant answered): the attempt cannot commit. */
    private Throwable failed;

    AurogonTxn(final TxnRuntime runtime, final Techniques techniques) {
        this.runtime = runtime;
        this.techniques = techniques;
        this.id = runtime.nextTxnId();
        this.timestamps = AurogonClock.of(runtime, techniques.clock());
        this.ts = timestamps.next();
        this.clock = new StageClock(runtime.timers());
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
        return access(table, key, false);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return access(table, key, techniques.preattach());
    }

    /** The pre-attach choice of the access being created ({@link #newAccess}). */
    private boolean attaching;

    private boolean preattachOf(final Access a) {
        return attaching && !a.readOnlyTable();
    }

    private Future<UnsafeBuffer> access(final String table, final long key, final boolean preattach) {
        attaching = preattach;
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + Long.toHexString(id)
                + " is over"));
        }
        final Catalog.Table t;
        try {
            t = runtime.catalog().table(table);
        } catch (final UnknownKeyException e) {
            return Future.failedFuture(e);
        }
        Access a = byKey.get(new Key(table, key));
        if (a == null) {
            a = newAccess(table, key, t);
        }
        if (a.deleting) {
            return Future.failedFuture(new UnknownKeyException("key " + key + " of " + table + " is deleted"));
        }
        if (a.fetch == null) { // inserted by this attempt, never read
            return Future.succeededFuture(valueCopy(a));
        }
        return a.fetch.map(AurogonTxn::valueCopy);
    }

    private Access newAccess(final String table, final long key, final Catalog.Table t) {
        final Access a = new Access(table, key, t.partitionOf(key));
        accesses.add(a);
        byKey.put(new Key(table, key), a);
        a.fetch = fetch(a, preattachOf(a));
        inFlight.add(a.fetch);
        return a;
    }

    /**
     * The READ of {@code a} (with its pre-attached write when {@code preattach}); sets what it saw before it ends.
     * A pre-attaching READ may have installed its pending version whatever came back (an error after the install, a
     * lost reply): the version counts as installed ({@code locked}, so an abort rolls it back and releases the reads
     * parked on it; rolling back nothing is a no-op) unless the participant answered that it installed nothing.
     */
    private Future<Access> fetch(final Access a, final boolean preattach) {
        final UnsafeBuffer request = header(a, preattach ? Participant.FLAG_PREATTACH
            : techniques.deferral() ? 0 : Participant.FLAG_NO_DEFER);
        a.locked = preattach;
        return call(a, AurogonRpc.READ, request).onFailure(e -> failed = e).compose(reply -> {
            final UnsafeBuffer p = reply.payload();
            final int status = p.getInt(0);
            if (status == Participant.REFUSED || status == Participant.NOT_FOUND) {
                a.locked = false; // the install was refused, or there is no such table: nothing installed
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
        return call(a, AurogonRpc.READ_MORE, request).compose(reply -> {
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
        WriteSet.refuseReadOnly("write", table, runtime.catalog().table(table));
        final Access a = byKey.get(new Key(table, key));
        if (a == null || !(a.fetched || a.inserted)) {
            throw new IllegalStateException("write of key " + key + " of " + table + " before reading it");
        }
        if (a.deleting) {
            throw new IllegalStateException("write of deleted key " + key + " of " + table + " (insert it)");
        }
        WriteSet.setNewValue(a, value, offset, length);
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
    }

    @Override
    public Future<Long> commit() {
        clock.mark(Stage.EXECUTE);
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + Long.toHexString(id)
                + " is over"));
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
            if (a.dirty && !a.locked) {
                final boolean inserting = a.inserted;
                final Future<Void> installed = call(a, inserting ? AurogonRpc.INSERT : AurogonRpc.INSTALL,
                    header(a, 0)).compose(reply -> {
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
                        return Future.failedFuture(refusal(a, status, AurogonAborts.INSTALL_REFUSED));
                    });
                installs.add(installed);
                inFlight.add(installed);
            }
        }
        return clock.staged(Stage.LOCK, Reposts.settle(installs)).compose(v -> decide())
            .recover(e -> e instanceof OutcomeUnknownException ? Future.failedFuture(e)
                : abort().transform(done -> Future.failedFuture(done.failed() ? done.cause() : e)));
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
            return Future.succeededFuture(ts);
        });
    }

    /**
     * The COMMIT of {@code a}'s version with its value: in one request when it fits one RRPC bucket; else the value's
     * first bytes are staged by STAGE requests and the COMMIT, sent once they are all acknowledged, carries the rest.
     */
    private Future<Void> commitWrite(final Access a) {
        final int length = a.deleting ? 0 : a.newLength;
        return runtime.rocket(a.partition.node()).compose(rocket -> {
            final int carried = Math.min(length, rocket.maxPayload() - AurogonRpc.HEADER_BYTES);
            final int prefix = length - carried;
            final int partBytes = rocket.maxPayload() - AurogonRpc.STAGE_HEADER_BYTES;
            final List<Future<?>> parts = new ArrayList<>();
            for (int from = 0; from < prefix; from += partBytes) {
                final int n = Math.min(partBytes, prefix - from);
                final UnsafeBuffer part = new UnsafeBuffer(new byte[AurogonRpc.STAGE_HEADER_BYTES + n]);
                fill(part, a, length);
                part.putInt(AurogonRpc.STAGE_OFFSET, from);
                part.putBytes(AurogonRpc.STAGE_HEADER_BYTES, a.newValue, from, n);
                parts.add(Reposts.untilAccepted(runtime.timers(), () -> call(a, AurogonRpc.STAGE, part))
                    .compose(reply -> expectOk(a, "STAGE", reply)));
            }
            final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + carried]);
            fill(request, a, a.deleting ? AurogonRpc.DELETE : length);
            if (carried > 0) {
                request.putBytes(AurogonRpc.HEADER_BYTES, a.newValue, prefix, carried);
            }
            return Reposts.settle(parts).compose(staged -> Reposts.untilAccepted(runtime.timers(),
                () -> call(a, AurogonRpc.COMMIT, request))).compose(reply -> expectOk(a, "COMMIT", reply));
        });
    }

    @Override
    public Future<Void> abort() {
        if (aborted != null) {
            return aborted;
        }
        finished = true;
        // Nothing may be left in flight: a READ still out may yet install its pre-attached version.
        aborted = Future.join(new ArrayList<>(inFlight)).transform(settled -> {
            final List<Future<?>> rollbacks = new ArrayList<>();
            for (final Access a : accesses) {
                if (a.locked) {
                    a.locked = false;
                    rollbacks.add(rollback(a));
                }
            }
            return Reposts.settle(rollbacks).recover(e -> {
                final String why = "transaction " + Long.toHexString(id) + " could not roll back its pending "
                    + "versions: " + e;
                runtime.giveUp(why);
                return Future.failedFuture(new NotServingException(why, e));
            });
        });
        return aborted;
    }

    @Override
    public Future<Void> quiesced() {
        return Future.join(new ArrayList<>(inFlight)).transform(ar -> Future.succeededFuture());
    }

    private Future<Void> rollback(final Access a) {
        return Reposts.untilAccepted(runtime.timers(), () -> call(a, AurogonRpc.ROLLBACK, header(a, 0)))
            .compose(reply -> expectOk(a, "ROLLBACK", reply));
    }

    private Future<Void> expectOk(final Access a, final String what, final RpcReply reply) {
        final int status = reply.payload().getInt(0);
        return status == Participant.OK ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException(
            "Aurogon " + what + " of key " + a.key + " of " + a.table + " at " + AurogonTimestamp.toString(ts)
                + " answered " + status));
    }

    private Future<RpcReply> call(final Access a, final int rpc, final UnsafeBuffer request) {
        return runtime.rocket(a.partition.node()).compose(rocket -> rocket.call(rpc, request)).onSuccess(reply ->
            timestamps.observe(reply.payload().getLong(rpc == AurogonRpc.READ || rpc == AurogonRpc.READ_MORE
                ? AurogonRpc.READ_SEEN_OFFSET : AurogonRpc.STATUS_SEEN_OFFSET)));
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
