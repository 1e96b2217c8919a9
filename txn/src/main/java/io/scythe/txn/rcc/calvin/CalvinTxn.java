package io.scythe.txn.rcc.calvin;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.HistoryRecorder;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.rcc.calvin.CalvinWire.Decl;
import io.scythe.txn.rcc.calvin.CalvinWire.Key;
import io.scythe.txn.rcc.calvin.CalvinWire.Record;
import io.scythe.txn.rcc.calvin.CalvinWire.Write;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One CALVIN transaction, executed on the loop of the client that runs it. Its read and write sets are declared up
 * front: every key the procedure reads ({@code read}, a shared lock) or will write ({@code readForUpdate}, an
 * exclusive lock) before its first record comes back, i.e. in its first round of reads (SmallBank and YCSB issue all
 * of theirs at once). Then the transaction is sealed and sequenced ({@link CalvinNode#submit}). Once every participant
 * forwarded its records, the reads complete, the procedure computes its writes, and the commit sends them to the
 * active participants, which write and release. A read after the seal turns the rest into OLLP's reconnaissance
 * ({@link #reconnoitre}): sequenced again with the whole set, and re-run on the locked records ({@link #run});
 * restarted when the re-run names a key outside that set.
 * Inserts and deletes are declared writes (an exclusive lock, by OLLP when named late). Nothing else aborts it but
 * the procedure itself (a user abort releases the locks without writing) and a duplicate insert. Loop-confined
 * to the client's loop; the fields the home loop touches are named so.
 */
final class CalvinTxn implements Txn {
    private final TxnRuntime runtime;
    private final CalvinNode.Lane lane;
    private final CalvinNode node;
    private final String mode;
    private final long epochNs;
    /** Its form: messages by RPC, or one-sided WRITEs into the peers' inboxes. */
    private final boolean rpc;
    /** Whether its node logs the batch it is sequenced in before dispatching it ({@link CalvinInputLog}). */
    private final boolean inputLog;
    /** Its id: the first run's, then (OLLP) the sequenced run's. */
    private long id;
    /**
     * OLLP (Calvin's reconnaissance): the procedure read a key after its first round was sequenced (a key that
     * depends on a value read). The first run's locks are released, the rest of the procedure runs as reconnaissance
     * (unlocked one-sided reads of the keys it names, its writes buffered), and its commit sequences it again with
     * the whole set it named; at execution the procedure runs again on the locked records ({@link #run}).
     */
    private boolean recon;
    /** The first run's locks released (set when the reconnaissance starts). */
    private Future<Void> firstReleased;
    /** Reconnaissance reads in flight or done. */
    private final List<Future<Record>> reconReads = new ArrayList<>();
    /** The sequenced run of a reconnaissance (its records re-run on, or checked against the guessed ones). */
    private boolean validating;
    /** The sequenced run's records, as its participants locked and read them. */
    private Promise<List<Record>> locked;
    /**
     * Calvin's deterministic re-execution: the procedure runs again on the records the sequenced run holds locked
     * ({@link #run}); while it does, a read or write outside the locked set is a miss.
     */
    private boolean replaying;
    /** The re-run is done and stayed inside the locked set: its writes are the ones committed. */
    private boolean replayed;
    /** The first key the re-run named outside the locked set (it then restarts), or null. */
    private String miss;
    private final Promise<Void> firstDelivered = Promise.promise();
    private final Map<Key, Entry> entries = new LinkedHashMap<>();
    private boolean sealScheduled;
    private boolean sealed;
    private boolean delivered;
    private Promise<Long> finished;
    private boolean abortPending;
    /** An insert of a key this transaction inserted already: its commit fails with DUPLICATE_KEY. */
    private String duplicate;
    private static final byte NONE = -1;
    /** Per participant node, the keys it owns (set at seal, read by the home loop). */
    private Map<Integer, Decl> decls;
    // Home loop only:
    /** The records of the current run so far (each run its own: the OLLP sequenced run starts afresh). */
    private Forwards forwards;
    /** Its place in the total order (epoch, node, position), set by the home loop before any record comes back. */
    private volatile long orderTs;

    private static final class Entry {
        final Key key;
        final Catalog.Partition partition;
        final int owner;
        boolean forUpdate;
        /** OLLP: read unlocked by the reconnaissance (its record the guess). */
        boolean reconnoitred;
        /** Declared exclusive in the run sequenced first (its lock held there until the writes). */
        boolean declaredExclusive;
        final List<Promise<UnsafeBuffer>> waiting = new ArrayList<>(1);
        Record record;
        /** What the commit does to it: {@link #NONE}, {@link CalvinWire#UPDATE}, {@code INSERT} or {@code DELETE}. */
        byte op = NONE;
        /** The value an update or insert installs. */
        byte[] written;

        Entry(final Key key, final Catalog.Partition partition, final int owner) {
            this.key = key;
            this.partition = partition;
            this.owner = owner;
        }
    }

    CalvinTxn(final TxnRuntime runtime, final CalvinNode.Lane lane, final String mode, final long epochNs,
              final boolean rpc, final boolean inputLog) {
        this.rpc = rpc;
        this.inputLog = inputLog;
        this.runtime = runtime;
        this.lane = lane;
        this.node = lane.node();
        this.mode = mode;
        this.epochNs = epochNs;
        this.id = runtime.nextTxnId();
    }

    boolean inputLog() {
        return inputLog;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public String mode() {
        return mode;
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        return declare(table, key, false);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return declare(table, key, true);
    }

    private Future<UnsafeBuffer> declare(final String table, final long key, final boolean forUpdate) {
        if (finished != null || validating && !replaying) {
            return Future.failedFuture(new IllegalStateException("CALVIN (" + mode + ") transaction "
                + Long.toHexString(id) + " reads key " + key + " of " + table + " after its commit began"));
        }
        final Key k = new Key(table, key);
        Entry e = entries.get(k);
        if (sealed && e != null && e.record != null && (e.forUpdate || !forUpdate)) {
            final Promise<UnsafeBuffer> again = Promise.promise(); // read again, as locked (or guessed) before
            complete(e, again);
            return again.future();
        }
        if (replaying) {
            return Future.failedFuture(missed(k, forUpdate ? "reads for update" : "reads"));
        }
        if (e == null) {
            final Catalog.Partition partition;
            try {
                partition = runtime.catalog().table(table).partitionOf(key);
            } catch (final UnknownKeyException unknown) {
                return Future.failedFuture(unknown);
            }
            e = new Entry(k, partition, CalvinNode.owner(runtime, table, key, node.nodes()));
            entries.put(k, e);
        }
        if (sealed) {
            return reconnoitre(e, forUpdate);
        }
        e.forUpdate |= forUpdate;
        final Promise<UnsafeBuffer> value = Promise.promise();
        e.waiting.add(value);
        scheduleSeal();
        return value.future();
    }

    private void scheduleSeal() {
        if (!sealScheduled) {
            sealScheduled = true;
            lane.executor().execute(this::seal); // after the procedure issued the rest of this round
        }
    }

    /** The entry of {@code key} of {@code table}, made (not yet declared) when new. */
    private Entry entry(final String table, final long key, final Catalog.Partition partition) {
        return entries.computeIfAbsent(new Key(table, key), k -> new Entry(k, partition,
            CalvinNode.owner(runtime, table, key, node.nodes())));
    }

    /**
     * {@code e} is to be written (an insert or delete): declared exclusive with the first round when that is not
     * sequenced yet; else, when the sequenced run does not hold it exclusively, by OLLP (sequenced again with it).
     */
    private void needExclusive(final Entry e) {
        if (replaying) {
            if (!e.declaredExclusive) {
                missed(e.key, "writes");
            }
        } else if (!sealed) {
            e.forUpdate = true;
            scheduleSeal();
        } else if (recon || !e.declaredExclusive) {
            reconnoitre(e, true);
        }
    }

    /**
     * OLLP: a read of {@code e} after the first round was sequenced. Starts the reconnaissance (releasing the first
     * run's locks once its records are here) and reads the record unlocked, one-sided from its memory node; the
     * sequenced run checks it later.
     */
    private Future<UnsafeBuffer> reconnoitre(final Entry e, final boolean forUpdate) {
        final Promise<UnsafeBuffer> value = Promise.promise();
        if (reconnoitred(e, forUpdate)) {
            complete(e, value);
        } else {
            e.waiting.add(value);
        }
        return value.future();
    }

    /** Starts the reconnaissance if need be and its read of {@code e}; whether {@code e}'s record is known already. */
    private boolean reconnoitred(final Entry e, final boolean forUpdate) {
        if (!recon) {
            recon = true;
            firstReleased = firstDelivered.future().compose(v -> release());
        }
        e.forUpdate |= forUpdate;
        if (e.record != null) {
            return true;
        }
        if (!e.reconnoitred) {
            e.reconnoitred = true;
            final Future<Record> read = CalvinNode.readRecord(runtime, new io.scythe.txn.onesided.ReadSet(runtime),
                e.key, a -> { }, 0);
            reconReads.add(read);
            read.onSuccess(r -> {
                e.record = r;
                for (final Promise<UnsafeBuffer> p : e.waiting) {
                    complete(e, p);
                }
                e.waiting.clear();
            });
        }
        return false;
    }

    /** Releases the first run's locks without writing (OLLP: the reconnaissance goes on unlocked). */
    private Future<Void> release() {
        final Promise<Void> released = Promise.promise();
        final List<Integer> active = activeParticipants();
        node.onHome(() -> node.finish(this, orderTs, Map.of(), active).onComplete(ar -> lane.executor().execute(
            () -> released.handle(ar))));
        return released.future();
    }

    /** The nodes where the run sequenced last holds exclusive locks (keys named since do not count). */
    private List<Integer> activeParticipants() {
        final List<Integer> active = new ArrayList<>();
        for (final Entry e : entries.values()) {
            if (e.declaredExclusive && !active.contains(e.owner)) {
                active.add(e.owner);
            }
        }
        java.util.Collections.sort(active);
        return active;
    }

    /**
     * OLLP's sequenced run, once the reconnaissance is over: sequences the transaction again (a new id) with every key
     * the procedure named; completes with the records its participants locked, once every one arrived.
     */
    private Future<List<Record>> sequenceGuessed() {
        for (final Entry e : entries.values()) {
            if (e.record == null) {
                return Future.failedFuture(new IllegalStateException("CALVIN transaction " + Long.toHexString(id)
                    + " commits before its read of " + e.key + " came back"));
            }
        }
        final long first = id;
        id = runtime.nextTxnId();
        final Map<Integer, Decl> byNode = declsOf();
        final String tooLarge = tooLarge(byNode);
        if (tooLarge != null) {
            return Future.failedFuture(new IllegalArgumentException(tooLarge));
        }
        validating = true;
        locked = Promise.promise();
        decls = byNode;
        for (final Entry e : entries.values()) {
            e.declaredExclusive = e.forUpdate;
        }
        final int keys = entries.size();
        node.onHome(() -> {
            forwards = new Forwards(keys);
            node.renamed(first); // the first run's parts whose records will not all come (none should) are over
            node.submit(this, epochNs, rpc);
        });
        return locked.future();
    }

    /** Per participant node, the keys of it there (true: written, an exclusive lock). */
    private Map<Integer, Decl> declsOf() {
        final Map<Integer, List<Key>> keys = new TreeMap<>();
        final Map<Integer, List<Boolean>> modes = new TreeMap<>();
        for (final Entry e : entries.values()) {
            keys.computeIfAbsent(e.owner, o -> new ArrayList<>()).add(e.key);
            modes.computeIfAbsent(e.owner, o -> new ArrayList<>()).add(e.forUpdate);
        }
        final Map<Integer, Decl> byNode = new HashMap<>();
        for (final Map.Entry<Integer, List<Key>> k : keys.entrySet()) {
            byNode.put(k.getKey(), new Decl(id, node.index(), k.getValue(), modes.get(k.getKey())));
        }
        return byNode;
    }

    /** The first round of reads is issued: the sets are declared; sequence the transaction. */
    private void seal() {
        if (finished != null) {
            return; // aborted before it was sequenced
        }
        sealed = true;
        final Map<Integer, Decl> byNode = declsOf();
        final String tooLarge = tooLarge(byNode);
        if (tooLarge != null) {
            finished = Promise.promise();
            finished.complete(0L);
            for (final Entry e : entries.values()) {
                e.waiting.forEach(p -> p.fail(new IllegalArgumentException(tooLarge)));
            }
            return;
        }
        decls = byNode;
        forwards = new Forwards(entries.size());
        for (final Entry e : entries.values()) {
            e.declaredExclusive = e.forUpdate;
        }
        node.onHome(() -> node.submit(this, epochNs, rpc));
    }

    /** Why this transaction cannot be dispatched (more keys at a node than a message counts), or null. */
    private String tooLarge(final Map<Integer, Decl> byNode) {
        for (final Decl d : byNode.values()) {
            if (d.keys().size() > 0xffff) {
                return "CALVIN (" + mode + ") dispatches at most 65535 keys of a transaction at one node: "
                    + d.keys().size() + " at node " + d.origin();
            }
        }
        return null;
    }

    /** What of it node {@code d} is dispatched: its keys there, or {@code null} when it has none there. Home loop. */
    Decl declFor(final int d) {
        return decls.get(d);
    }

    /** Its place in the total order. Home loop. */
    void ordered(final long ts) {
        this.orderTs = ts;
    }

    /** Its place in the total order (0: not sequenced yet). */
    long orderTs() {
        return orderTs;
    }

    /**
     * Records of it arrived from a participant (all of its keys there, or some); the keys whose records are whole
     * now. Home loop.
     */
    List<Key> forwarded(final List<Record> records) {
        final List<Key> whole = forwards.add(records);
        final List<Record> all = forwards.completedBy(whole);
        if (all != null) {
            lane.executor().execute(() -> deliver(all));
        }
        return whole;
    }

    /** Every record arrived: the reads complete (or, when it was aborted meanwhile, its locks are released). */
    private void deliver(final List<Record> records) {
        if (validating) {
            locked.complete(records);
            return;
        }
        for (final Record r : records) {
            entries.get(r.key()).record = r;
        }
        delivered = true;
        firstDelivered.complete();
        if (abortPending) {
            end(false);
            return;
        }
        for (final Entry e : entries.values()) {
            for (final Promise<UnsafeBuffer> p : e.waiting) {
                complete(e, p);
            }
            e.waiting.clear();
        }
    }

    /**
     * OLLP's re-check at execution when the procedure cannot be run again (it was not given by {@link #run}): every
     * record as the reconnaissance saw it, else restart with {@link CalvinModule#OLLP_RESTART} (nothing written).
     */
    private Future<Long> checkGuess(final List<Record> records) {
        String changed = null;
        for (final Record r : records) {
            final Record guess = entries.get(r.key()).record;
            if (changed == null && (r.status() != guess.status() || r.version() != guess.version()
                || r.status() == CalvinWire.FAILED)) {
                changed = r.key() + " (version " + Long.toHexString(guess.version()) + " guessed, "
                    + Long.toHexString(r.version()) + " at execution)";
            }
        }
        if (changed == null) {
            return commitOrDuplicate();
        }
        return restart("CALVIN's reconnaissance guessed " + changed + ": restarted");
    }

    /** Releases the locks without writing and fails with {@link CalvinModule#OLLP_RESTART}. */
    private <R> Future<R> restart(final String why) {
        return endFailing(new io.scythe.txn.AbortException(CalvinModule.OLLP_RESTART, why));
    }

    /** Releases the locks without writing and fails with {@code cause} (or with why they could not be released). */
    private <R> Future<R> endFailing(final Throwable cause) {
        return end(false).transform(ar -> Future.failedFuture(ar.failed() ? ar.cause() : cause));
    }

    /** Notes that the re-run named {@code k} outside the locked set; the abort its read fails with. */
    private io.scythe.txn.AbortException missed(final Key k, final String what) {
        final String why = "CALVIN's re-execution on the locked values " + what + " " + k + ", outside the set "
            + "its reconnaissance locked: restarted";
        if (miss == null) {
            miss = why;
        }
        return new io.scythe.txn.AbortException(CalvinModule.OLLP_RESTART, why);
    }

    /**
     * Runs {@code procedure}; when it went by OLLP, Calvin's deterministic re-execution: once the reconnaissance is
     * over the transaction is sequenced again with every key it named, and when its participants hold those locks the
     * procedure runs again on the locked records. Its writes and result must be a function of its inputs and the
     * values it reads: anything else it does happens once per run (a workload's side counter, such as TATP's
     * not-found count, counts twice; a fault point fires on the reconnaissance, whose id never commits). Its result
     * and writes are that run's. Only when the re-run names a key outside the locked set (or
     * writes one locked shared) does it restart ({@link CalvinModule#OLLP_RESTART}, nothing written); a re-run that
     * names fewer keys commits (the extra locks are released with the others).
     */
    @Override
    public <R> Future<R> run(final java.util.function.Function<Txn, Future<R>> procedure) {
        return procedure.apply(this).compose(result -> !recon || finished != null ? Future.succeededFuture(result)
            : firstReleased.compose(v -> Future.all(reconReads)).compose(v -> sequenceGuessed())
                .compose(records -> replay(procedure, records)));
    }

    /** The re-run of {@code procedure} on {@code records}, locked by the sequenced run. */
    private <R> Future<R> replay(final java.util.function.Function<Txn, Future<R>> procedure,
                                 final List<Record> records) {
        for (final Record r : records) {
            entries.get(r.key()).record = r;
        }
        for (final Entry e : entries.values()) {
            e.op = NONE;
            e.written = null;
        }
        duplicate = null;
        replaying = true;
        Future<R> again;
        try {
            again = procedure.apply(this);
        } catch (final RuntimeException e) {
            again = Future.failedFuture(e);
        }
        return again.transform(ar -> {
            replaying = false;
            if (miss != null) {
                return restart(miss);
            }
            if (ar.failed()) {
                return endFailing(ar.cause());
            }
            replayed = true;
            return Future.succeededFuture(ar.result());
        });
    }

    /** Completes a read of {@code e} with its record: its value, absent, or the participant's failure. */
    private void complete(final Entry e, final Promise<UnsafeBuffer> p) {
        switch (e.record.status()) {
            case CalvinWire.FOUND -> {
                final UnsafeBuffer copy = new UnsafeBuffer(new byte[e.record.value().length]);
                copy.putBytes(0, e.record.value());
                p.complete(copy);
            }
            case CalvinWire.ABSENT -> p.fail(new UnknownKeyException("no key " + e.key.key() + " in table "
                + e.key.table()));
            default -> p.fail(new IllegalStateException("CALVIN participant could not read " + e.key + ": "
                + new String(e.record.value(), java.nio.charset.StandardCharsets.UTF_8)));
        }
    }

    @Override
    public void write(final String table, final long key, final DirectBuffer value, final int offset,
                      final int length) {
        final Entry e = entries.get(new Key(table, key));
        if (e == null || !e.forUpdate) {
            throw new IllegalStateException("CALVIN (" + mode + ") writes only keys declared up front with "
                + "readForUpdate: key " + key + " of " + table + " was " + (e == null ? "not declared" : "only read"));
        }
        io.scythe.txn.onesided.WriteSet.checkLength(table, e.partition, length);
        if (e.op == CalvinWire.DELETE || e.op != CalvinWire.INSERT && e.record != null
            && e.record.status() != CalvinWire.FOUND) {
            throw new IllegalStateException("CALVIN (" + mode + ") write of key " + key + " of " + table + ", which "
                + (e.op == CalvinWire.DELETE ? "this transaction deleted" : "is absent") + ": insert it");
        }
        if (e.op != CalvinWire.INSERT) {
            e.op = CalvinWire.UPDATE;
        }
        e.written = new byte[length];
        value.getBytes(offset, e.written);
    }

    /**
     * An insert, a declared write like any other: of a key declared exclusive (in the first round, or by OLLP when it
     * came later), created by its owner in sequence order at commit (or its tombstone revived). A key read present
     * (or inserted twice) fails the commit with {@code DUPLICATE_KEY}, as in the other protocols; decided on the
     * record as locked, so the same on every run.
     */
    @Override
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        final Catalog.Table t = runtime.catalog().table(table);
        io.scythe.txn.onesided.WriteSet.refuseReadOnly("insert", table, t);
        final Catalog.Partition partition = t.partitionOf(key);
        io.scythe.txn.onesided.WriteSet.checkLength(table, partition, length);
        refuseAfterCommit("inserts", table, key);
        if (replaying && !entries.containsKey(new Key(table, key))) {
            missed(new Key(table, key), "inserts");
            return;
        }
        final Entry e = entry(table, key, partition);
        final byte[] v = new byte[length];
        value.getBytes(offset, v);
        if (e.op == CalvinWire.INSERT) {
            duplicate = "key " + key + " of " + table + " inserted twice";
            return;
        }
        e.written = v;
        if (e.op == CalvinWire.DELETE) { // deleted and inserted again by this transaction: an update
            e.op = CalvinWire.UPDATE;
            return;
        }
        e.op = CalvinWire.INSERT; // a present key is a duplicate: told at commit (its record may be on its way)
        needExclusive(e);
    }

    /** A delete, a declared write: of a key read present (else it fails, as in the other protocols). */
    @Override
    public void delete(final String table, final long key) {
        io.scythe.txn.onesided.WriteSet.refuseReadOnly("delete", table, runtime.catalog().table(table));
        refuseAfterCommit("deletes", table, key);
        final Entry e = entries.get(new Key(table, key));
        if (e != null && e.op == CalvinWire.INSERT) { // inserted and deleted by this transaction: nothing
            e.op = NONE;
            e.written = null;
            return;
        }
        if (e == null || e.record == null || e.record.status() != CalvinWire.FOUND || e.op == CalvinWire.DELETE) {
            throw new IllegalStateException("delete of key " + key + " of " + table + " before reading it (or "
                + "after reading it deleted)");
        }
        e.op = CalvinWire.DELETE;
        e.written = null;
        needExclusive(e);
    }

    private void refuseAfterCommit(final String what, final String table, final long key) {
        if (finished != null || validating && !replaying) {
            throw new IllegalStateException("CALVIN (" + mode + ") transaction " + Long.toHexString(id) + " " + what
                + " key " + key + " of " + table + " after its commit began");
        }
    }

    /** Why the commit fails as a duplicate (a key inserted read present, or inserted twice), or null. */
    private String duplicateKey() {
        if (duplicate != null) {
            return duplicate;
        }
        for (final Entry e : entries.values()) {
            if (e.op == CalvinWire.INSERT && e.record.status() == CalvinWire.FOUND) {
                return "key " + e.key.key() + " of " + e.key.table() + " exists";
            }
        }
        return null;
    }

    /** Commits, or, when it inserts a key that exists, releases without writing and fails with DUPLICATE_KEY. */
    private Future<Long> commitOrDuplicate() {
        final String dup = duplicateKey();
        if (dup == null) {
            return end(true);
        }
        return end(false).compose(v -> Future.failedFuture(new io.scythe.txn.AbortException(
            io.scythe.txn.AbortReason.DUPLICATE_KEY, "insert of " + dup)));
    }

    @Override
    public Future<Long> commit() {
        if (finished != null) {
            return Future.failedFuture(new IllegalStateException("CALVIN transaction " + Long.toHexString(id)
                + " is over already"));
        }
        if (entries.isEmpty()) {
            finished = Promise.promise();
            finished.complete(0L);
            return finished.future();
        }
        if (recon) {
            if (replayed) {
                return commitOrDuplicate(); // the re-run's writes, on the locked records
            }
            if (validating) {
                return Future.failedFuture(new IllegalStateException("CALVIN transaction " + Long.toHexString(id)
                    + " commits twice"));
            }
            return firstReleased.compose(v -> Future.all(reconReads)).compose(v -> sequenceGuessed())
                .compose(this::checkGuess);
        }
        if (!delivered) {
            return Future.failedFuture(new IllegalStateException("CALVIN transaction " + Long.toHexString(id)
                + " commits before its records came back (its procedure did not wait for its reads)"));
        }
        return commitOrDuplicate();
    }

    @Override
    public Future<Void> abort() {
        if (finished != null) {
            return finished.future().<Void>mapEmpty().otherwiseEmpty();
        }
        if (!sealScheduled || entries.isEmpty()) {
            finished = Promise.promise();
            finished.complete(0L);
            return Future.succeededFuture();
        }
        if (!sealed) { // the seal will see it and sequence nothing
            finished = Promise.promise();
            finished.complete(0L);
            return Future.succeededFuture();
        }
        if (recon && !validating) { // the reconnaissance: nothing held once the first run's locks are released
            finished = Promise.promise();
            final Promise<Long> done = finished;
            firstReleased.onComplete(ar -> done.complete(0L));
            return firstReleased.otherwiseEmpty();
        }
        if (validating) { // the sequenced run holds its locks (or will): released once its records are here
            finished = Promise.promise();
            final Future<Long> done = finished.future();
            locked.future().onSuccess(records -> end(false)); // completes finished
            return done.<Void>mapEmpty().otherwiseEmpty();
        }
        if (!delivered) {
            abortPending = true;
            finished = Promise.promise();
            return finished.future().<Void>mapEmpty().otherwiseEmpty();
        }
        return end(false).<Void>mapEmpty().otherwiseEmpty();
    }

    /** Sends the writes (none when it aborted) to the active participants; completes with its commit timestamp. */
    private Future<Long> end(final boolean commit) {
        if (finished == null) {
            finished = Promise.promise();
        }
        final Promise<Long> done = finished;
        final Map<Integer, List<Write>> writes = new HashMap<>();
        final List<Integer> active = activeParticipants();
        for (final Entry e : entries.values()) {
            if (commit && e.op != NONE) {
                writes.computeIfAbsent(e.owner, o -> new ArrayList<>()).add(new Write(e.key, e.op,
                    e.op == CalvinWire.DELETE ? new byte[0] : e.written));
            }
        }
        node.onHome(() -> node.finish(this, orderTs, writes, active).onComplete(ar -> lane.executor().execute(() -> {
            if (ar.failed()) {
                runtime.giveUp("CALVIN transaction " + Long.toHexString(id) + " could not finish at its active "
                    + "participants: " + ar.cause());
                done.fail(new io.scythe.txn.OutcomeUnknownException("CALVIN write-back failed", ar.cause()));
                return;
            }
            if (commit) {
                record();
            }
            done.complete(orderTs);
        })));
        return done.future();
    }

    /** Tells the loop's history recorder what it read and wrote, at the versions the participants saw and made. */
    private void record() {
        final HistoryRecorder recorder = runtime.recorder();
        if (recorder != null) {
            recorder.committed(id, orderTs, accesses());
        }
    }

    /** What it read and writes, at the versions the participants saw and make (once its records are here). */
    List<Access> accesses() {
        final List<Access> accesses = new ArrayList<>(entries.size());
        for (final Entry e : entries.values()) {
            final Access a = new Access(e.key.table(), e.key.key(), e.partition);
            if (e.record.status() == CalvinWire.FOUND) {
                a.fetched = true;
                a.readVersion = e.record.version();
                a.valueLength = e.record.value().length;
            } else {
                a.readAbsent = true;
            }
            if (e.op != NONE) {
                a.dirty = true;
                a.deleting = e.op == CalvinWire.DELETE;
                a.installedVersion = ObjectLayout.versionAfter(orderTs, e.record.version());
            }
            accesses.add(a);
        }
        return accesses;
    }
}
