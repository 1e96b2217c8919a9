package io.scythe.txn.aurogon;

import io.scythe.rrpc.RpcReply;
import io.scythe.storage.BackupTables;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Reposts;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Resolving a transaction whose coordinator may be dead, through its backups (§4.5): "the primaries check whether all
 * the relevant backups hold its updates; if so they commit the PENDING updates, else they discard them and tell the
 * backups to roll back". A memory node cannot call another here (participants only answer RRPCs), so a live
 * coordinator runs the check for the node: a node that suspects a transaction (a version pending, or a replication
 * held, past {@link ParticipantService#ORPHAN_LEASE_NS}) answers reads parked on it {@link Participant#ORPHAN} and
 * names it in every reply's hint; the coordinator that reads either runs {@link #resolve}:
 * <ol>
 *   <li>SUSPECTS at the node: its records pending at the timestamp, and whether it holds the transaction as a
 *       backup;</li>
 *   <li>HOLDS at the node, or at the backups of the first pending record's partition: FULL answers carry the mask
 *       of the transaction's backup nodes; then HOLDS at every node of the mask. A node that does not hold all of
 *       its share fences the transaction (ABORTED, and refuses its parts from then on; a replacement born after the
 *       timestamp answers NOT_HERE instead, fencing nothing: the share is lost), so the decision cannot change
 *       under a coordinator that was only slow;</li>
 *   <li>every node FULL or COMMITTED: durable, so commit: the holders APPLY it first, one after the other in node
 *       order, then every write is fetched from a backup (FETCH) and committed at its primary (STAGE, COMMIT; a
 *       version already committed is left as it is), and the node's suspect versions the transaction did not write
 *       (pre-attached, read only) are rolled back;</li>
 *   <li>else roll back: DISCARD at every live memory node, one after the other in node order, then ROLLBACK of the
 *       node's suspect versions.</li>
 * </ol>
 * The decision is the same whoever resolves the transaction and however often (fences and applies stick), so another
 * node's suspects of the same transaction are resolved alike when their hints are read. With every holder alive it
 * rests on states that cannot change once asked; after a memory node died with a coordinator ({@link #lostShare}) it
 * need not (a fence on the dead node is gone with it), so each decision is marked at every live holder, in node
 * order, before anything is done at a primary, and a resolver that meets the opposite mark yields ({@link #mark}).
 * A transaction's state left on a node nobody talks to stays until someone does.
 */
final class CoordinatorRecovery {
    private static final TxnRuntime.Key<Set<Long>> RESOLVING = new TxnRuntime.Key<>("aurogon-resolving");

    /** Recoveries run by every loop of this process (tests, reports). */
    private static final java.util.concurrent.atomic.AtomicLong COMMITTED =
        new java.util.concurrent.atomic.AtomicLong();
    private static final java.util.concurrent.atomic.AtomicLong ROLLED_BACK =
        new java.util.concurrent.atomic.AtomicLong();
    /** Decisions taken by {@link #lostShare} on COMMITTED_AT (a backup share died with the coordinator). */
    private static final java.util.concurrent.atomic.AtomicLong LOST_SHARE =
        new java.util.concurrent.atomic.AtomicLong();
    /** Decisions given up because another resolver's opposite one was marked first ({@link Decision#yielded}). */
    private static final java.util.concurrent.atomic.AtomicLong YIELDED = new java.util.concurrent.atomic.AtomicLong();

    private CoordinatorRecovery() {
    }

    /**
     * A recovery left its transaction in doubt: a suspect no surviving backup wrote after a lost share, which may be a
     * write whose every copy died (its commit reached a primary) or one pre-attached and never written. Its version
     * stays pending; readers parked on it wait a bound and abort ({@link AurogonTxn#waitInDoubt}).
     */
    static final class InDoubt extends IllegalStateException {
        InDoubt(final String message) {
            super(message);
        }
    }

    /**
     * A coordinator's COMMIT answered {@link Participant#NOT_PENDING}: no version pending or committed at its
     * timestamp there (rolled back, never installed, or committed by a recovery and reclaimed since).
     */
    static final class NotPending extends IllegalStateException {
        NotPending(final String message) {
            super(message);
        }
    }

    /** Asks {@code node} (a backup) HOLDS of {@code ts}: its answer's state ({@link Backups#COMMITTED}, ...). */
    static Future<Integer> holdsState(final TxnRuntime runtime, final String node, final long ts) {
        return call(runtime, node, AurogonRpc.HOLDS, header(0, 0, 0, ts)).map(reply -> reply.payload().getInt(0));
    }

    /** How many suspect transactions recoveries committed and rolled back in this process. */
    static long[] outcomes() {
        return new long[] {COMMITTED.get(), ROLLED_BACK.get(), LOST_SHARE.get()};
    }

    /** A reply's hint named {@code ts} on {@code node}: resolve it in the background unless this loop already is. */
    static void hinted(final TxnRuntime runtime, final long ts, final String node) {
        final Set<Long> resolving = runtime.extension(RESOLVING, rt -> new HashSet<>());
        if (resolving.add(ts)) {
            resolve(runtime, ts, node).onComplete(done -> resolving.remove(ts));
        }
    }

    /**
     * How many SUSPECTS replies one resolution reads (each cut short, {@link AurogonRpc#SUSPECTS_TRUNCATED}) before it
     * fails: thousands of records of one transaction on one node.
     */
    static final int MAX_SUSPECT_PAGES = 64;

    /** Resolves the transaction at {@code ts} that {@code node} suspects (see the class comment). */
    static Future<Void> resolve(final TxnRuntime runtime, final long ts, final String node) {
        return resolve(runtime, ts, node, 1, null);
    }

    /**
     * Page {@code page} of the resolution: a SUSPECTS reply cut short is decided, then asked again (what was decided is
     * no longer pending, so the next reply holds the next records). After a decision by the backups ({@code prior}),
     * a later page's records are the node's suspects that decision did not commit (a commit committed every write
     * the backups held, on every primary): rolled back. After a lost share, each page is decided afresh.
     */
    private static Future<Void> resolve(final TxnRuntime runtime, final long ts, final String node, final int page,
                                        final Decision prior) {
        return call(runtime, node, AurogonRpc.SUSPECTS, header(0, 0, 0, ts)).compose(reply -> {
            final boolean truncated = (reply.payload().getInt(4) & AurogonRpc.SUSPECTS_TRUNCATED) != 0;
            if (truncated && page >= MAX_SUSPECT_PAGES) {
                return Future.failedFuture(new IllegalStateException("Aurogon cannot resolve transaction "
                    + AurogonTimestamp.toString(ts) + " suspected on " + node + ": its SUSPECTS replies were still cut "
                    + "short after " + page + " pages"));
            }
            final Future<Decision> decided = prior != null
                ? rollBackSuspects(runtime, ts, node, records(reply.payload())).map(prior)
                : resolvePage(runtime, ts, node, reply);
            return decided.compose(d -> truncated && (d == null || !d.yielded)
                ? resolve(runtime, ts, node, page + 1, d) : Future.<Void>succeededFuture());
        });
    }

    /**
     * One SUSPECTS reply decided; the decision by the backups, or null (resolved meanwhile, or a lost share), or one
     * that {@link Decision#yielded} (another resolver's opposite decision was marked first: nothing done here).
     */
    private static Future<Decision> resolvePage(final TxnRuntime runtime, final long ts, final String node,
                                                final RpcReply reply) {
        final DirectBuffer p = reply.payload();
        final List<long[]> records = records(p);
        final List<String> first = new ArrayList<>();
        boolean lost = false;
        if ((p.getInt(4) & AurogonRpc.SUSPECTS_HELD) != 0) {
            first.add(node);
        } else if (!records.isEmpty()) {
            final Catalog.Partition partition = partitionOf(runtime.catalog(), primaryId(records.get(0)[0]),
                records.get(0)[1]);
            for (final Catalog.Replica r : partition.backups()) {
                if (!runtime.catalog().removed(r.node())) {
                    first.add(r.node());
                }
            }
            if (first.isEmpty() && !replicated(runtime.catalog())) {
                return Future.failedFuture(new IllegalStateException("Aurogon cannot resolve transaction "
                    + AurogonTimestamp.toString(ts) + " suspected on " + node + ": its partition has no backups "
                    + "(run with --replicas 1 or more)"));
            }
            lost = first.isEmpty(); // its backups died (or were promoted: a promoted copy has none left)
        } else {
            return Future.succeededFuture(); // resolved meanwhile
        }
        if (lost) {
            return lostShare(runtime, ts, node, records);
        }
        return decide(runtime, ts, first).compose(decision -> decision.forgotten
            ? yielded(decision).map(decision)
            : decision.lost ? lostShare(runtime, ts, node, records)
            : (decision.commit ? commit(runtime, ts, decision, node, records)
            : rollBack(runtime, ts, decision, node, records)).map(decision));
    }

    /** A SUSPECTS or COMMITTED_AT answer's records, {@code [table id, key]}. */
    private static List<long[]> records(final DirectBuffer p) {
        final List<long[]> records = new ArrayList<>();
        for (int i = 0; i < p.getInt(0); i++) {
            records.add(new long[] {p.getInt(8 + i * AurogonRpc.SUSPECT_BYTES),
                p.getLong(12 + i * AurogonRpc.SUSPECT_BYTES)});
        }
        return records;
    }

    /**
     * Whether every partition was loaded with more backups than memory nodes have died since: then each write of a
     * transaction has a copy on a live backup (a promoted copy keeps what it held as a backup), whichever nodes died.
     * {@code sim} runs a coordinator and a memory node crashing together only with {@code --replicas 2} or more
     * ({@link AurogonModule#combinedCrashRefusal}).
     */
    static boolean copiesSurvive(final Catalog catalog) {
        if (catalog.configuration() == null) {
            return false;
        }
        int dead = 0;
        for (final String n : memoryNodes(catalog)) {
            dead += catalog.removed(n) ? 1 : 0;
        }
        for (final Catalog.Table t : catalog.tables()) {
            for (final Catalog.Partition p : t.partitions()) {
                if (catalog.loadedAs(t.name(), p).loaded().backups().size() <= dead) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether any partition of the catalog has (or had, before a failover) a backup. */
    private static boolean replicated(final Catalog catalog) {
        for (final Catalog.Table t : catalog.tables()) {
            for (final Catalog.Partition p : t.partitions()) {
                if (!p.backups().isEmpty() || catalog.configuration() != null
                    && !catalog.loadedAs(t.name(), p).loaded().node().equals(p.node())) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The transaction at {@code ts} lost a backup share: a node of its mask (or every backup of the suspect record's
     * partition) died with it, so "all the relevant backups hold its updates" (§4.5) cannot be asked; the paper is
     * silent on a coordinator and a backup dying together. Decided from what survives (a deviation, in the package
     * docs): HOLDS at every live memory node (a node holding none of it fences it, as always, but a replacement born
     * after {@code ts} answers NOT_HERE: then f+1 copies are not assumed, the COMMITTED_AT path decides);
     * <ul>
     *   <li>a live node of the mask those answers name answers ABORTED: it was never replicated in full, so no COMMIT
     *       was sent: roll back;</li>
     *   <li>a node answers COMMITTED (an APPLY came: every primary committed), or a live node holds a committed
     *       version at {@code ts} (COMMITTED_AT: the commit reached a primary): commit from the surviving backups,
     *       and fail loudly when a suspect version is not among their writes (its value died with the lost share and
     *       the coordinator: past what one backup a partition tolerates);</li>
     *   <li>else no COMMIT reached any live primary: roll back (DISCARD at the live holders, ROLLBACK of the
     *       suspects), but only once every live node holding a version pending at {@code ts} was told it died
     *       ({@link AurogonRpc#COMMITTED_AT_COORDINATOR_LIVE}: the host fenced it there, nothing of it lands any more);
     *       until then the transaction is left to its coordinator ({@link InDoubt}: readers wait a bound and abort,
     *       the next hint asks again). Silence for the orphan lease is not death: one only paused, holding every
     *       acknowledgement, sends its COMMITs when it wakes, and a COMMIT landing between the COMMITTED_AT asks and
     *       the ROLLBACKs was a partial commit (before; chaos, stop 44). Not covered: a coordinator the cluster
     *       declared dead and fenced on every node that heard it, still running (a zombie), whose INSTALL to a node
     *       that had not heard it when asked lands before the release step fences it there too.</li>
     * </ul>
     * With f+1 copies ({@link #copiesSurvive}) the commit rests on every live share being held, and a resolver B
     * that asked the memory node before it died, was told "not held" there and rolls back, races a resolver A that
     * reaches this path after the death and finds every live share held before B's DISCARDs land (review, stop 38:
     * B's ROLLBACKs went out beside its DISCARDs, A committed: atomicity broken). Both decisions are marked now, in
     * node order, before either acts at a primary ({@link #mark}): A's APPLY at a holder B discarded is refused and
     * A rolls back; B's DISCARD at a holder A applied is refused and B yields, nothing rolled back. One resolver per
     * transaction was the other way, but resolvers are whichever live coordinators read a suspect (coordinators
     * cannot call each other) and a chosen one may die; the marks need only the holders, which f+1 copies keep.
     * Without f+1 copies a commit here needs a COMMIT the coordinator sent.
     */
    static Future<Decision> lostShare(final TxnRuntime runtime, final long ts, final String node,
                                      final List<long[]> suspects) {
        final Decision d = new Decision();
        return lostShare(runtime, ts, node, suspects, d).map(v -> d.yielded ? d : null);
    }

    private static Future<Void> lostShare(final TxnRuntime runtime, final long ts, final String node,
                                          final List<long[]> suspects, final Decision d) {
        final List<String> live = liveMemoryNodes(runtime.catalog());
        final Set<String> aborted = new HashSet<>();
        final Set<String> notHere = new HashSet<>();
        final List<Future<?>> asked = new ArrayList<>();
        for (final String n : live) {
            final Decision one = new Decision();
            asked.add(holds(runtime, ts, List.of(n), one).map(v -> {
                if (one.lost) {
                    notHere.add(n); // a replacement born after ts: its predecessor's share is unknown
                } else if (one.forgotten) {
                    d.forgotten = true;
                } else if (!one.commit) {
                    aborted.add(n);
                } else {
                    d.mask |= one.mask;
                    d.entries.putAll(one.entries);
                    d.applied |= one.applied;
                    d.txnId = d.txnId != 0 ? d.txnId : one.txnId;
                }
                return null;
            }));
        }
        return Reposts.settle(asked).compose(v -> {
            if (d.forgotten) {
                return yielded(d);
            }
            for (final String n : nodesOf(runtime.catalog(), d.mask)) {
                if (aborted.contains(n)) {
                    d.commit = false;
                    return rollBack(runtime, ts, d, node, suspects);
                }
            }
            // A replacement that answered NOT_HERE is a live node of the catalog but no live copy of what its
            // predecessor held: f+1 copies are not assumed then (review, stop 45: the shortcut committed the share
            // one node held and rolled back the write only the predecessor had held, as "never written").
            if (notHere.isEmpty() && copiesSurvive(runtime.catalog())) {
                // f+1 copies (§4.5's assumption): every write has a live backup copy, and every live node of the mask
                // holds its share in full: §4.5's rule over the surviving backups. A COMMIT may have been sent (and
                // the commit reported); if none was, committing what every backup held is as good.
                LOST_SHARE.incrementAndGet();
                return d.entries.isEmpty() ? rollBack(runtime, ts, d, node, suspects)
                    : commit(runtime, ts, d, node, suspects);
            }
            final List<Future<List<long[]>>> found = new ArrayList<>();
            final List<String> mayStillCommit = new ArrayList<>();
            for (final String n : live) {
                found.add(call(runtime, n, AurogonRpc.COMMITTED_AT, header(0, 0, 0, ts)).map(reply -> {
                    if ((reply.payload().getInt(4) & AurogonRpc.COMMITTED_AT_COORDINATOR_LIVE) != 0) {
                        mayStillCommit.add(n);
                    }
                    if ((reply.payload().getInt(4) & AurogonRpc.COMMITTED_AT_TRUNCATED) != 0) {
                        throw new IllegalStateException("Aurogon cannot recover transaction "
                            + AurogonTimestamp.toString(ts) + ": " + n + " holds more versions committed at it than "
                            + "its COMMITTED_AT reply carries (" + reply.payload().getInt(0) + ")");
                    }
                    return records(reply.payload());
                }));
            }
            return Future.all(found).compose(all -> {
                final List<long[]> committed = new ArrayList<>();
                for (final Future<List<long[]>> f : found) {
                    committed.addAll(f.result());
                }
                if (d.applied || !committed.isEmpty()) {
                    LOST_SHARE.incrementAndGet();
                    return commitLost(runtime, ts, d, node, suspects, committed);
                }
                if (!mayStillCommit.isEmpty()) {
                    // No COMMIT found yet is no proof none was sent: its coordinator may only be paused, holding every
                    // acknowledgement (stop 44's chaos run: a CN paused past the 1 ms lease under load, a recovery
                    // rolled one key back here after the COMMITTED_AT asks, the COMMIT of another landed: money not
                    // conserved). Left to the coordinator until the host tells it dead (fenced) on those nodes.
                    return Future.failedFuture(new InDoubt("Aurogon leaves transaction "
                        + AurogonTimestamp.toString(ts) + " to its coordinator: its backup share is lost and no "
                        + "COMMIT of it was found, but " + mayStillCommit + " hold versions pending at it and were "
                        + "not told its coordinator died (a COMMIT may still come)"));
                }
                LOST_SHARE.incrementAndGet();
                return rollBack(runtime, ts, d, node, suspects);
            });
        });
    }

    /**
     * Commits what the surviving backups hold; a suspect none of them wrote cannot be told from a lost write: the
     * recovery fails, leaving it pending (in doubt), rather than roll it back (a partial commit).
     */
    static Future<Void> commitLost(final TxnRuntime runtime, final long ts, final Decision d,
                                           final String node, final List<long[]> suspects,
                                           final List<long[]> committed) {
        if (d.entries.isEmpty() && !suspects.isEmpty()) {
            return Future.failedFuture(new InDoubt("Aurogon cannot recover transaction "
                + AurogonTimestamp.toString(ts) + ": its commit reached a primary, but every backup holding its "
                + "writes died with its coordinator (suspects on " + node + ")"));
        }
        return commit(runtime, ts, d, node, suspects, committed, true);
    }

    /** What the holders answered (package-private for tests). */
    static final class Decision {
        boolean commit = true;
        /** A node of the mask is dead: decided by {@link #lostShare}. */
        boolean lost;
        /**
         * The decision was not taken: a holder refused its mark (an APPLY or DISCARD, {@link #mark}), another
         * resolver's opposite decision being marked there first; nothing was done at a primary, the transaction is
         * left to that resolver (or to the next hint, which finds its mark).
         */
        boolean yielded;
        /**
         * A holder answered {@link Backups#FORGOTTEN}: the transaction was decided there long ago (its effect is at
         * the primaries) and forgotten; nothing is decided here ({@link #yielded}).
         */
        boolean forgotten;
        /** A node answered COMMITTED: the coordinator (or a recovery) applied it, so every primary committed. */
        boolean applied;
        long mask;
        /** The transaction's id, as its coordinator sent it with its replication (0: no backup answered it). */
        long txnId;
        final Map<String, Integer> entries = new HashMap<>();
    }

    /** HOLDS at {@code first}, then at every other node of the mask they name. */
    static Future<Decision> decide(final TxnRuntime runtime, final long ts, final List<String> first) {
        final Decision d = new Decision();
        return holds(runtime, ts, first, d).compose(v -> {
            if (!d.commit || d.forgotten || d.lost) {
                return Future.succeededFuture(d);
            }
            final List<String> rest = new ArrayList<>();
            for (final String n : nodesOf(runtime.catalog(), d.mask)) {
                if (runtime.catalog().removed(n)) {
                    d.lost = true;
                    return Future.succeededFuture(d);
                }
                if (!d.entries.containsKey(n)) {
                    rest.add(n);
                }
            }
            return holds(runtime, ts, rest, d).map(d);
        });
    }

    private static Future<Void> holds(final TxnRuntime runtime, final long ts, final List<String> nodes,
                                      final Decision d) {
        final List<Future<?>> asked = new ArrayList<>();
        for (final String n : nodes) {
            asked.add(call(runtime, n, AurogonRpc.HOLDS, header(0, 0, 0, ts)).map(reply -> {
                final DirectBuffer p = reply.payload();
                if (p.capacity() < AurogonRpc.HOLDS_REPLY_BYTES) { // a node of another version: a clear error
                    throw new IllegalStateException("Aurogon HOLDS reply of " + p.capacity() + " bytes from " + n
                        + ", not " + AurogonRpc.HOLDS_REPLY_BYTES);
                }
                final int state = p.getInt(0);
                d.applied |= state == Backups.COMMITTED;
                if (state == Backups.FORGOTTEN) {
                    d.forgotten = true;
                } else if (state == Backups.NOT_HERE) {
                    d.lost = true; // a replacement: what its predecessor held died with it (lostShare decides)
                } else if (state == Backups.ABORTED) {
                    d.commit = false;
                } else {
                    d.mask |= p.getLong(8);
                    d.entries.put(n, p.getInt(4));
                    final long txnId = p.getLong(AurogonRpc.HOLDS_REPLY_TXN_OFFSET);
                    if (txnId != 0 && d.txnId != 0 && txnId != d.txnId) {
                        throw new IllegalStateException("Aurogon HOLDS of " + AurogonTimestamp.toString(ts) + ": "
                            + n + " holds transaction " + Long.toHexString(txnId) + ", another backup "
                            + Long.toHexString(d.txnId));
                    }
                    d.txnId = txnId != 0 ? txnId : d.txnId;
                }
                return null;
            }));
        }
        return Reposts.settle(asked);
    }

    static Future<Void> commit(final TxnRuntime runtime, final long ts, final Decision d, final String node,
                               final List<long[]> suspects) {
        return commit(runtime, ts, d, node, suspects, List.of(), false);
    }

    /**
     * {@code committed}: versions at {@code ts} found committed at primaries (reported too, once). {@code strict} (a
     * lost share, {@link #commitLost}): a suspect that no surviving backup wrote may be a write whose every copy died,
     * not one pre-attached and never written, so it is not rolled back: the recovery fails, naming it, once every
     * write the backups hold is committed. Else (every backup of the mask answered) such a suspect was never written.
     */
    private static Future<Void> commit(final TxnRuntime runtime, final long ts, final Decision d, final String node,
                                       final List<long[]> suspects, final List<long[]> committed,
                                       final boolean strict) {
        return mark(runtime, ts, inOrder(runtime.catalog(), d.entries.keySet()), AurogonRpc.APPLY, 0).compose(taken -> {
            if (taken == Backups.FORGOTTEN) { // decided long ago at a holder, and forgotten: not decided again
                d.forgotten = true;
                return yielded(d);
            }
            if (taken != Participant.OK) { // a DISCARD was marked first: another resolver decided to roll back, so do we
                d.commit = false;
                return rollBack(runtime, ts, d, node, suspects);
            }
            return commitMarked(runtime, ts, d, node, suspects, committed, strict);
        });
    }

    /** {@link #commit} once every holder took the APPLY: the writes committed at their primaries. */
    private static Future<Void> commitMarked(final TxnRuntime runtime, final long ts, final Decision d,
                                             final String node, final List<long[]> suspects,
                                             final List<long[]> committed, final boolean strict) {
        final Set<Long> written = new HashSet<>();
        final List<io.scythe.txn.Access> recovered = new ArrayList<>();
        final List<Future<?>> commits = new ArrayList<>();
        for (final Map.Entry<String, Integer> e : d.entries.entrySet()) {
            for (int i = 0; i < e.getValue(); i++) {
                final int index = i;
                commits.add(fetch(runtime, e.getKey(), ts, index, null, 0).compose(w -> {
                    final int primaryTable = w.table % BackupTables.ID_STRIDE;
                    if (!written.add((long) primaryTable << 48 ^ w.key)) {
                        return Future.succeededFuture(); // another backup's copy of the same write
                    }
                    final Catalog.Partition partition = partitionOf(runtime.catalog(), primaryTable, w.key);
                    final io.scythe.txn.Access a = new io.scythe.txn.Access(tableName(runtime.catalog(),
                        primaryTable), w.key, partition);
                    a.dirty = true;
                    a.deleting = w.value == null;
                    a.installedVersion = ts;
                    return commitValue(runtime, partition.node(), partition.descriptor().schema().id(), w.key, ts,
                        w.value == null ? null : new UnsafeBuffer(w.value), w.value == null ? 0 : w.value.length, true)
                        .map(status -> {
                            if (status == Participant.OK || status == Participant.FIRST_SEEN) {
                                recovered.add(a); // committed by this recovery, or by its coordinator unreported
                            }
                            return null;
                        });
                }));
            }
        }
        return Reposts.settle(commits).compose(v -> {
            if (strict) {
                final Set<Long> found = new HashSet<>();
                for (final long[] c : committed) {
                    found.add(c[0] % BackupTables.ID_STRIDE << 48 ^ c[1]);
                }
                for (final long[] r : suspects) {
                    final long k = (long) primaryId(r[0]) << 48 ^ r[1];
                    if (!written.contains(k) && !found.contains(k)) {
                        return Future.failedFuture(new InDoubt("Aurogon cannot recover transaction "
                            + AurogonTimestamp.toString(ts) + ": its commit reached a primary, but no surviving backup "
                            + "holds its write of " + tableName(runtime.catalog(), primaryId(r[0])) + "/" + r[1]
                            + " (suspect on " + node + "; its copies died with its coordinator): left in doubt"));
                    }
                }
            }
            final List<Future<?>> after = new ArrayList<>();
            for (final long[] r : suspects) {
                if (!written.contains((long) primaryId(r[0]) << 48 ^ r[1])) { // pre-attached, never written
                    after.add(expect(call(runtime, node, AurogonRpc.ROLLBACK,
                        header((int) r[0] | AurogonRpc.BY_RECOVERY, 0, r[1], ts)),
                        "ROLLBACK", node, false));
                }
            }
            return Reposts.settle(after);
        }).onSuccess(v -> {
            for (final long[] c : committed) {
                final int primaryTable = (int) (c[0] % BackupTables.ID_STRIDE);
                if (written.add((long) primaryTable << 48 ^ c[1])) { // committed by its coordinator, held by no backup
                    final io.scythe.txn.Access a = new io.scythe.txn.Access(tableName(runtime.catalog(),
                        primaryTable), c[1], partitionOf(runtime.catalog(), primaryTable, c[1]));
                    a.dirty = true;
                    a.installedVersion = ts;
                    recovered.add(a);
                }
            }
            COMMITTED.incrementAndGet();
            // Its writes, for the history: in doubt (what it read is unknown here, and it never reported a commit),
            // under the id its coordinator gave it (carried by its replication), so that the transaction is known.
            final io.scythe.txn.HistoryRecorder recorder = runtime.recorder();
            if (recorder != null && !recovered.isEmpty() && d.txnId != 0) {
                recorder.inDoubt(d.txnId, recovered); // FULL or COMMITTED answers carry it
            }
        }).compose(v -> d.txnId == 0 && !recovered.isEmpty() && runtime.recorder() != null
            ? Future.failedFuture(new IllegalStateException("Aurogon recovered transaction "
                + AurogonTimestamp.toString(ts) + " (" + recovered.size() + " writes committed) but cannot report it to "
                + "the history: no surviving backup carried its id (id 0 is never recorded)"))
            : Future.succeededFuture());
    }

    /**
     * Rolls the transaction back: DISCARD at every live memory node in node order first (each fences it, whether it
     * holds a share or not: the mask may be unknown when the first holder asked was fenced), one after the other, then
     * ROLLBACK of the suspects. A DISCARD refused (the holder was applied: another resolver decided to commit and
     * marked it first) stops it with nothing rolled back ({@link Decision#yielded}).
     */
    static Future<Void> rollBack(final TxnRuntime runtime, final long ts, final Decision d, final String node,
                                 final List<long[]> suspects) {
        final List<String> live = liveMemoryNodes(runtime.catalog());
        return mark(runtime, ts, live, AurogonRpc.DISCARD, 0).compose(taken -> {
            if (taken != Participant.OK) { // an APPLY marked first, or a decision forgotten: nothing rolled back
                d.forgotten |= taken == Backups.FORGOTTEN;
                return yielded(d);
            }
            return rollBackSuspects(runtime, ts, node, suspects);
        });
    }

    /** The decision is not taken here ({@link Decision#yielded}): another resolver's is marked, or was forgotten. */
    private static Future<Void> yielded(final Decision d) {
        d.yielded = true;
        YIELDED.incrementAndGet();
        return Future.succeededFuture();
    }

    /** ROLLBACK of the suspects on {@code node}, the decision marked (or one taken on an earlier page). */
    private static Future<Void> rollBackSuspects(final TxnRuntime runtime, final long ts, final String node,
                                                 final List<long[]> suspects) {
        final List<Future<?>> done = new ArrayList<>();
        for (final long[] r : suspects) {
            done.add(expect(call(runtime, node, AurogonRpc.ROLLBACK,
                        header((int) r[0] | AurogonRpc.BY_RECOVERY, 0, r[1], ts)),
                "ROLLBACK", node, false));
        }
        return Reposts.settle(done).onSuccess(v -> ROLLED_BACK.incrementAndGet());
    }

    /**
     * A recovery's decision marked at its holders before it acts at any primary: APPLY (commit) or DISCARD (roll
     * back) at {@code nodes[from..]}, in node order, one after the other. True when every live one took it; false at
     * the first that refused ({@link Backups#FENCED}: the opposite decision is marked there). Marks stick (a holder
     * applied refuses a DISCARD, one discarded or fenced refuses an APPLY), so two resolvers marking in the same order
     * meet at the first live holder both reach, and the later one yields: whatever it marked before lay on nodes that
     * died since (the other resolver passed them too, and would have met its mark). Both could act only if no live
     * holder carried both marks, and the live holders when the later one finishes are among those when the earlier
     * one did, never none with {@link #copiesSurvive}. A node that died meanwhile takes no mark ({@code node-gone}).
     *
     * <p>"Before it acts at any primary" holds for the original primaries; a promoted copy is marked like any holder,
     * and its mark is itself the action (an APPLY there commits the adopted pending version, a DISCARD rolls it back):
     * still safe, since it is reached in the same node order. A holder keeps the last {@link Backups#REMEMBERED}
     * decided transactions; one it forgot (its coordinator's low-water mark at or above it) answers
     * {@link Backups#FORGOTTEN} to either mark, and the resolver yields with nothing done: a decision once marked is
     * never marked the other way, however late a resolver comes (before, a forgotten one took the opposite mark as a
     * new entry, review stop 39). The status answered: OK when every live holder took the mark, else the refusal
     * ({@link Backups#FENCED} or {@link Backups#FORGOTTEN}).
     */
    private static Future<Integer> mark(final TxnRuntime runtime, final long ts, final List<String> nodes,
                                        final int rpc, final int from) {
        if (from == nodes.size()) {
            return Future.succeededFuture(Participant.OK);
        }
        final String n = nodes.get(from);
        return call(runtime, n, rpc, header(0, 0, 0, ts)).map(reply -> reply.payload().getInt(0))
            .recover(e -> AurogonTxn.gone(e) ? Future.succeededFuture(Participant.OK) : Future.failedFuture(e))
            .compose(status -> {
                if (status == Backups.FENCED || status == Backups.FORGOTTEN) {
                    return Future.succeededFuture(status);
                }
                if (status != Participant.OK && !(rpc == AurogonRpc.APPLY && status == Participant.NOT_PENDING)) {
                    return Future.failedFuture(new IllegalStateException("Aurogon "
                        + (rpc == AurogonRpc.APPLY ? "APPLY" : "DISCARD") + " of " + AurogonTimestamp.toString(ts)
                        + " on " + n + " answered " + status));
                }
                return mark(runtime, ts, nodes, rpc, from + 1);
            });
    }

    /** {@code nodes} in the memory nodes' order (the order every resolver marks them in). */
    static List<String> inOrder(final Catalog catalog, final Set<String> nodes) {
        final List<String> ordered = new ArrayList<>();
        for (final String n : memoryNodes(catalog)) {
            if (nodes.contains(n)) {
                ordered.add(n);
            }
        }
        for (final String n : nodes) {
            if (!ordered.contains(n)) {
                ordered.add(n); // not in the placement (a test's node): last
            }
        }
        return ordered;
    }

    private record Write(int table, long key, byte[] value) {
    }

    /** Write {@code index} of the transaction held on {@code node}, its value fetched from {@code from} on. */
    private static Future<Write> fetch(final TxnRuntime runtime, final String node, final long ts, final int index,
                                       final byte[] into, final int from) {
        return call(runtime, node, AurogonRpc.FETCH, header(index, from, 0, ts)).compose(reply -> {
            final DirectBuffer p = reply.payload();
            if (p.getInt(0) != Participant.OK) {
                return Future.failedFuture(new IllegalStateException("Aurogon FETCH of write " + index + " of "
                    + AurogonTimestamp.toString(ts) + " on " + node + " answered " + p.getInt(0)));
            }
            final int length = p.getInt(4);
            final byte[] value = length == AurogonRpc.DELETE ? null : into != null ? into : new byte[length];
            final int part = reply.payload().capacity() - AurogonRpc.FETCH_REPLY_HEADER_BYTES;
            if (value != null && part > 0) {
                p.getBytes(AurogonRpc.FETCH_REPLY_HEADER_BYTES, value, from, part);
            }
            if (value != null && from + part < value.length) {
                if (part <= 0) {
                    return Future.failedFuture(new IllegalStateException("Aurogon FETCH answered no bytes"));
                }
                return fetch(runtime, node, ts, index, value, from + part);
            }
            return Future.succeededFuture(new Write(p.getInt(16), p.getLong(8), value));
        });
    }

    /**
     * The COMMIT of the version at {@code ts} of {@code key} with {@code value} ({@code null}: a delete): in one
     * request when it fits one RRPC bucket; else its first bytes staged by STAGE requests, the COMMIT carrying the
     * rest. A recovery ({@code recovering}) accepts a version no longer pending (committed by someone else).
     */
    /** Sends one request to a node (the coordinator's own calls observe what replies say). */
    @FunctionalInterface
    interface Caller {
        Future<RpcReply> call(String node, int rpc, UnsafeBuffer request);
    }

    static Future<Integer> commitValue(final TxnRuntime runtime, final String node, final int table, final long key,
                                    final long ts, final DirectBuffer value, final int valueLength,
                                    final boolean recovering) {
        return commitValue(runtime, (n, rpc, request) -> call(runtime, n, rpc, request), node, table, key, ts, value,
            valueLength, recovering);
    }

    /**
     * {@code recovering}: a recovery's COMMIT, for which a version no longer pending is no error (another resolver or
     * the coordinator decided it). {@link Participant#COMMITTED_ALREADY} (the version
     * committed at {@code ts}: this attempt's, by a recovery while its coordinator was paused) is done for everyone; a
     * coordinator's COMMIT answered {@link Participant#NOT_PENDING} (rolled back, never installed) fails.
     */
    static Future<Integer> commitValue(final TxnRuntime runtime, final Caller caller, final String node,
                                       final int table, final long key, final long ts, final DirectBuffer value,
                                       final int valueLength, final boolean recovering) {
        final int length = value == null ? 0 : valueLength;
        return Removals.rocket(runtime, node).compose(rocket -> {
            final int carried = Math.min(length, rocket.maxPayload() - AurogonRpc.HEADER_BYTES);
            final int prefix = length - carried;
            final int partBytes = rocket.maxPayload() - AurogonRpc.STAGE_HEADER_BYTES;
            final List<Future<?>> parts = new ArrayList<>();
            for (int from = 0; from < prefix; from += partBytes) {
                final int n = Math.min(partBytes, prefix - from);
                final UnsafeBuffer part = new UnsafeBuffer(new byte[AurogonRpc.STAGE_HEADER_BYTES + n]);
                fill(part, table, length, key, ts);
                part.putInt(AurogonRpc.STAGE_OFFSET, from);
                part.putBytes(AurogonRpc.STAGE_HEADER_BYTES, value, from, n);
                parts.add(expect(Reposts.untilAccepted(runtime.timers(), () -> caller.call(node, AurogonRpc.STAGE,
                    part)), "STAGE", node, recovering));
            }
            final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + carried]);
            fill(request, recovering ? table | AurogonRpc.BY_RECOVERY : table, value == null ? AurogonRpc.DELETE
                : length, key, ts);
            if (carried > 0) {
                request.putBytes(AurogonRpc.HEADER_BYTES, value, prefix, carried);
            }
            return Reposts.settle(parts).compose(staged -> Reposts.untilAccepted(runtime.timers(),
                () -> caller.call(node, AurogonRpc.COMMIT, request))).compose(reply -> {
                    final int status = reply.payload().getInt(0);
                    return status == Participant.OK || status == Participant.COMMITTED_ALREADY
                        || recovering && (status == Participant.NOT_PENDING
                        || status == Participant.FIRST_SEEN) ? Future.succeededFuture(status)
                        : Future.failedFuture(status == Participant.NOT_PENDING ? new NotPending("Aurogon COMMIT of "
                        + table + "/" + key + " at " + AurogonTimestamp.toString(ts) + " on " + node + " answered "
                        + status + " (not pending)") : new IllegalStateException("Aurogon COMMIT of " + table + "/"
                        + key + " at " + AurogonTimestamp.toString(ts) + " on " + node + " answered " + status));
                });
        });
    }

    /**
     * Fails unless the answer is OK or {@link Participant#COMMITTED_ALREADY} (a STAGE of a version committed at its
     * timestamp), or, when {@code decidedIsFine}, that the version was decided already.
     */
    private static Future<Void> expect(final Future<RpcReply> call, final String what, final String node,
                                       final boolean decidedIsFine) {
        return call.compose(reply -> {
            final int status = reply.payload().getInt(0);
            return status == Participant.OK || status == Participant.COMMITTED_ALREADY
                || decidedIsFine && status == Participant.NOT_PENDING
                ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException("Aurogon " + what
                + " on " + node + " answered " + status));
        });
    }

    private static Future<RpcReply> call(final TxnRuntime runtime, final String node, final int rpc,
                                         final UnsafeBuffer request) {
        return Reposts.untilAccepted(runtime.timers(), () -> Removals.call(runtime, node, rpc, request));
    }

    private static UnsafeBuffer header(final int table, final int flags, final long key, final long ts) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        fill(request, table, flags, key, ts);
        return request;
    }

    static void fill(final UnsafeBuffer request, final int table, final int flagsOrLength, final long key,
                     final long ts) {
        request.putInt(AurogonRpc.TABLE_OFFSET, table);
        request.putInt(AurogonRpc.FLAGS_OFFSET, flagsOrLength);
        request.putLong(AurogonRpc.KEY_OFFSET, key);
        request.putLong(AurogonRpc.TS_OFFSET, ts);
    }

    // ---------------------------------------------------------------------------------------- placement

    /** {@link #memoryNodes} the configuration has not removed, in their order. */
    private static List<String> liveMemoryNodes(final Catalog catalog) {
        final List<String> live = new ArrayList<>();
        for (final String n : memoryNodes(catalog)) {
            if (!catalog.removed(n)) {
                live.add(n);
            }
        }
        return live;
    }

    /** The memory nodes in partition order (partition p of every table is on the p-th): bit p of a mask. */
    static List<String> memoryNodes(final Catalog catalog) {
        for (final Catalog.Table t : catalog.tables()) {
            final List<String> nodes = new ArrayList<>();
            for (final Catalog.Partition p : t.partitions()) {
                // By the placement loaded (a mask's bits name nodes, not who serves now: after a failover the
                // promoted copy's node serves two partitions).
                nodes.add(catalog.configuration() == null ? p.node() : catalog.loadedAs(t.name(), p).loaded().node());
            }
            if (nodes.size() > Long.SIZE) {
                throw new IllegalStateException("Aurogon's backup masks name at most 64 memory nodes, the catalog has "
                    + nodes.size());
            }
            return nodes;
        }
        return List.of();
    }

    static long bitOf(final Catalog catalog, final String node) {
        final int i = memoryNodes(catalog).indexOf(node);
        if (i < 0) {
            throw new IllegalStateException("memory node " + node + " is in no table's partitions");
        }
        return 1L << i;
    }

    private static List<String> nodesOf(final Catalog catalog, final long mask) {
        final List<String> nodes = memoryNodes(catalog);
        final List<String> out = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            if ((mask & 1L << i) != 0) {
                out.add(nodes.get(i));
            }
        }
        return out;
    }

    /**
     * The primary table id of a table id a node answered: a promoted copy serves its partition from its backup table
     * (an id {@link BackupTables#ID_STRIDE} apart), so its SUSPECTS name that one.
     */
    static int primaryId(final long tableId) {
        return (int) (tableId % BackupTables.ID_STRIDE);
    }

    private static String tableName(final Catalog catalog, final int tableId) {
        for (final Catalog.Table t : catalog.tables()) {
            if (primaryId(t.partitions().get(0).descriptor().schema().id()) == tableId) {
                return t.name();
            }
        }
        throw new IllegalStateException("Aurogon recovery: no table with id " + tableId + " in the catalog");
    }

    /** The partition of {@code key} of the table whose primary id is {@code tableId}. */
    private static Catalog.Partition partitionOf(final Catalog catalog, final int tableId, final long key) {
        for (final Catalog.Table t : catalog.tables()) {
            if (primaryId(t.partitions().get(0).descriptor().schema().id()) == tableId) {
                return t.partitionOf(key);
            }
        }
        throw new IllegalStateException("Aurogon recovery: no table with id " + tableId + " in the catalog");
    }
}
