package io.scythe.txn.aurogon;

import io.scythe.bridge.Bridge;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.runtime.LoopTimers;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The Aurogon participant of one memory node, served over RRPC ({@link AurogonRpc}). Its records start from the node's
 * LogDB (a record's first version is the object's value at its LogDB version) and its newest committed values are
 * written through to the LogDB object, so end-of-run checks and loaders see Aurogon's data as every other protocol's.
 * Holds nothing until an Aurogon request arrives. Runs on the node's RPC loop.
 */
public final class ParticipantService {
    /**
     * How long a version may stay pending, or a replication held, before this node suspects its coordinator dead
     * (§4.5's heartbeat timeout); only on nodes that hold backups. Far above a transaction's lifetime in the runs
     * measured (tens of microseconds); a live coordinator suspected wrongly is decided by the recovery from its backups
     * (fenced, or committed from complete ones), which costs it the attempt.
     */
    public static final long ORPHAN_LEASE_NS = 1_000_000;

    private final LogDb db;
    private final Participant participant;
    private final Backups backups;
    private LoopTimers timers;
    /** Whether this node was checked for backup tables (they are created after the services start). */
    private boolean replicationChecked;

    /**
     * The service of each memory node's LogDB in this process (end-of-run checks, tests). The value is weak too: the
     * service holds its LogDB, so a strong value would keep its key, and every memory node's regions, alive for the
     * life of the JVM (10 MB of direct memory per node the txn tests start: their fork ran out at 1.9 GB).
     */
    private static final java.util.Map<LogDb, java.lang.ref.WeakReference<ParticipantService>> BY_DB =
        java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /** The Aurogon service of memory node {@code db} in this process, or null. */
    public static ParticipantService of(final LogDb db) {
        final java.lang.ref.WeakReference<ParticipantService> service = BY_DB.get(db);
        return service == null ? null : service.get();
    }

    ParticipantService(final LogDb db, final Participant.Deferral deferral) {
        BY_DB.put(db, new java.lang.ref.WeakReference<>(this));
        this.db = db;
        this.participant = new Participant(new LogDbBacking(), this::defer, deferral);
        this.backups = new Backups(this::applyToBackup, this::defer, ORPHAN_LEASE_NS, this::silent);
    }

    /** When each coordinator (a timestamp's server and loop ids) last sent a request of its own here. */
    private final long[] heard = new long[1 << AurogonTimestamp.ID_BITS];

    /**
     * A coordinator's own request or heartbeat (not a recovery's request on its behalf) arrived from {@code client}
     * (the sending compute node incarnation's fabric identity, {@link RpcRequest#client}): it is alive.
     */
    private void heard(final String client, final long ts) {
        final int id = (int) (ts & 0xffff);
        heard[id] = timers().nowNs();
        if (client != heardFrom[id] && (client == null || !client.equals(heardFrom[id]))) {
            heardFromAnother(id, client);
        }
        heardTs[id] = Math.max(heardTs[id], ts);
        newestTs = Math.max(newestTs, ts);
    }

    /**
     * Another incarnation talks under coordinator id {@code id} (a restarted compute node's successor reusing its slot,
     * or a late frame of its predecessor): the largest timestamp heard from the one that talked so far is kept apart,
     * so {@link #coordinatorsDied} marks only the dead incarnation's own timestamps. Rare: once per restart per id.
     */
    private void heardFromAnother(final int id, final String client) {
        if (heardFrom[id] != null || heardTs[id] != 0) {
            final org.agrona.collections.Long2LongHashMap before = heardBefore.computeIfAbsent(
                String.valueOf(heardFrom[id]), c -> new org.agrona.collections.Long2LongHashMap(0));
            before.put(id, Math.max(before.get(id), heardTs[id]));
        }
        final org.agrona.collections.Long2LongHashMap mine = heardBefore.get(String.valueOf(client));
        heardTs[id] = mine == null ? 0 : mine.remove(id);
        if (mine != null && mine.isEmpty()) {
            heardBefore.remove(String.valueOf(client));
        }
        heardFrom[id] = client;
    }

    /**
     * Whether a timestamp's coordinator is taken for dead: not heard from for the lease, or told dead by the host at
     * or above this timestamp ({@link #coordinatorsDied}; a cluster's successor incarnation reuses the coordinator id
     * and is heard, so the silence alone never came for its predecessor's transactions).
     */
    private boolean silent(final long ts) {
        final int id = (int) (ts & 0xffff);
        return ts <= deadUpTo[id] || timers().nowNs() - heard[id] >= ORPHAN_LEASE_NS;
    }

    /** Per coordinator id, the largest timestamp heard from it in its own requests, from {@link #heardFrom}. */
    private final long[] heardTs = new long[1 << AurogonTimestamp.ID_BITS];
    /** Per coordinator id, the incarnation (fabric identity) {@link #heardTs} was heard from. */
    private final String[] heardFrom = new String[1 << AurogonTimestamp.ID_BITS];
    /** Per incarnation no longer the one last heard under an id, the largest timestamp heard from it per id. */
    private final java.util.Map<String, org.agrona.collections.Long2LongHashMap> heardBefore =
        new java.util.HashMap<>();
    /** Per coordinator id, the timestamp at or below which the host told it dead ({@link #coordinatorsDied}). */
    private final long[] deadUpTo = new long[1 << AurogonTimestamp.ID_BITS];

    /**
     * The host fenced a dead compute node ({@code MemoryNodeContext#onDeadNode}: cluster mode's recovery duty, after
     * its membership or lease said it died) whose transaction-id prefixes ({@code epoch << 48 | slot << 32}) are
     * {@code idPrefixes} and fabric identity {@code dead} (what its requests named as their client): every coordinator
     * of its server id (the slot, every loop) is dead up to the largest timestamp heard from that incarnation itself
     * (not from a successor incarnation already talking under the id; a release run again does not move the mark). Its
     * pending versions and held replications at or below become suspects at their next orphan check (a quarter lease),
     * whoever talks under the id since, and a new REPLICATE at or below is refused STALE with the mark as the floor, so
     * a successor's clock goes above everything its predecessor was heard to issue here. Any INSTALL, INSERT or
     * pre-attaching READ at or below the mark (a successor whose clock restarted below its predecessor's; the fenced
     * predecessor sends nothing any more) is refused {@link Participant#STALE} likewise ({@link #refused}), and one at
     * a timestamp another incarnation has pending here is refused whether or not a mark is set ({@link #anotherOwns});
     * a successor's version at or below the mark taken before the mark was set is suspected
     * wrongly and decided by §4.5's recovery from its backups, as a paused live coordinator's is: fenced, or committed
     * from complete backups; its reposted REPLICATE of a part already held here is answered by the hold, never refused. Runs on this node's loop.
     *
     * @return how many of the versions pending or transactions held here are at or below a mark now
     */
    int coordinatorsDied(final String dead, final long[] idPrefixes) {
        final org.agrona.collections.Long2LongHashMap before = heardBefore.remove(String.valueOf(dead));
        for (final long prefix : idPrefixes) {
            final int server = (int) (prefix >>> 32) & 0xff; // AurogonClock's server id: the node slot
            for (int loop = 0; loop <= AurogonTimestamp.MAX_LOOP; loop++) {
                final int id = server << 8 | loop;
                // Only what the dead incarnation itself was heard to issue: never its successor's timestamps under the
                // id (their REPLICATEs would be refused and their held ones suspected). A release run again finds the
                // same (or nothing, forgotten below): the mark does not move.
                long upTo = before == null ? 0 : before.get(id);
                if (dead != null && dead.equals(heardFrom[id])) {
                    upTo = Math.max(upTo, heardTs[id]);
                    heardFrom[id] = null; // fenced: nothing of it lands any more, its mark is kept in deadUpTo
                    heardTs[id] = 0;
                }
                deadUpTo[id] = Math.max(deadUpTo[id], upTo);
            }
        }
        int marked = 0;
        for (final long ts : participant.pendingTimestamps()) {
            marked += ts <= deadUpTo[(int) (ts & 0xffff)] ? 1 : 0;
        }
        return marked;
    }

    /**
     * Whether a COMMIT of {@code ts} from its coordinator may still land here: a version is pending here at {@code ts}
     * (only such a version takes a COMMIT) and the host has not told its coordinator id dead at or above {@code ts}
     * ({@link #coordinatorsDied}: fenced, nothing of it lands any more; the INSTALL that made the version pending was
     * heard from its incarnation, so that incarnation's release covers it). Silence for the orphan lease is not enough:
     * a loaded compute node's coordinator pauses past the 1 ms lease while holding every acknowledgement, and sends its
     * COMMITs when it wakes. Review (stop 45): asking whether any incarnation under the id was heard at or above
     * {@code ts} instead flagged, for good, a dead incarnation's timestamp on a node that never held anything of it,
     * once its successor talked there. A successor whose clock restarted below its predecessor's mark has its INSTALL
     * at or below it refused ({@link #refused}, as its pre-attaching READ: floored, it runs again above), and one at a
     * timestamp its predecessor has pending here is refused even before any mark ({@link #anotherOwns}), so no
     * version of it reads as a dead one's.
     */
    boolean mayStillCommit(final long ts) {
        return ts > deadUpTo[(int) (ts & 0xffff)] && participant.pendingAt(ts);
    }

    /**
     * Whether an INSTALL, INSERT or pre-attaching READ at {@code ts} from {@code client} (the request's sender) is
     * refused ({@link Participant#STALE}): at or below the mark its coordinator id was told dead up to
     * ({@link #coordinatorsDied}), or at a timestamp pending here that another incarnation made pending
     * ({@link #pendingBy}). A successor incarnation whose clock restarted below what its predecessor issued would
     * otherwise install a version that reads as the dead one's ({@link #mayStillCommit} false, suspected, decided
     * without its coordinator), and with no backups nothing else floors its clock: refused, its clock is floored at
     * {@link #floorFor} and it runs again above. The fenced predecessor itself sends nothing any more
     * ({@code coordinatorsDied} runs only after the host fenced it), so no exception is kept for it. A successor's
     * own version at or below the mark taken before the mark was set makes its later INSTALLs refused too: its attempt
     * aborts (rolling that version back), as the wrongly suspected version's recovery may anyway.
     */
    private boolean refused(final long ts, final String client) {
        return ts <= deadUpTo[(int) (ts & 0xffff)] || anotherOwns(ts, client);
    }

    /** The floor a {@link #refused} request's STALE answer carries: above its timestamp and the mark. */
    private long floorFor(final long ts) {
        return Math.max(ts, deadUpTo(ts));
    }

    /**
     * Whether a version is pending here at {@code ts} that an incarnation other than {@code client} made pending.
     * Review of the aurotests merge (issue 20): a successor whose clock restarted below its dead predecessor's can
     * issue exactly a timestamp the predecessor has pending here (same clock nanosecond and coordinator id), before
     * or without any mark; taken, its INSTALL of the pending key was answered OK as "the same write again" (its COMMIT
     * then committed the dead one's version with its own value, its abort rolled it back under a recovery that may be
     * committing it) and its INSTALL of another key joined the dead one's transaction.
     */
    private boolean anotherOwns(final long ts, final String client) {
        if (!participant.pendingAt(ts)) {
            pendingBy.remove(ts); // whoever made it pending before is done with it
            return false;
        }
        final String owner = pendingBy.get(ts);
        return owner != null && !owner.equals(String.valueOf(client));
    }

    /**
     * {@code client}'s INSTALL, INSERT or pre-attaching READ at {@code ts} was taken: the first one that made
     * {@code ts} pending here owns it ({@link #anotherOwns}). Entries of timestamps no longer pending are dropped when
     * a request meets them, and all of them whenever the map doubled since the last sweep (amortised O(1)).
     */
    private void owns(final long ts, final String client) {
        if (participant.pendingAt(ts) && !pendingBy.containsKey(ts)) {
            pendingBy.put(ts, String.valueOf(client));
            if (pendingBy.size() > 2 * pendingBySwept + 64) {
                final org.agrona.collections.Long2ObjectHashMap<String>.KeyIterator keys = pendingBy.keySet().iterator();
                while (keys.hasNext()) {
                    if (!participant.pendingAt(keys.nextLong())) {
                        keys.remove();
                    }
                }
                pendingBySwept = pendingBy.size();
            }
        }
    }

    /** Per timestamp pending here, the incarnation (fabric identity) whose request first made it pending. */
    private final org.agrona.collections.Long2ObjectHashMap<String> pendingBy =
        new org.agrona.collections.Long2ObjectHashMap<>();
    /** {@link #pendingBy}'s size after its last sweep. */
    private int pendingBySwept;

    /** The timestamp at or below which {@code ts}'s coordinator id was told dead, or 0 (tests). */
    long deadUpTo(final long ts) {
        return deadUpTo[(int) (ts & 0xffff)];
    }

    private LoopTimers timers() {
        if (timers == null) {
            timers = LoopTimers.on(Bridge.current()); // this node's loop (the simulator runs many on one thread)
        }
        return timers;
    }

    public Participant participant() {
        return participant;
    }

    public Backups backups() {
        return backups;
    }

    /**
     * Versions pending here plus transactions held here undecided (a cluster node's health, {@code scythe chaos}'s
     * end check that nothing is left pending). Read from another thread than this node's loop: a scan that meets
     * the loop's writes is tried again, up to 8 times; -1 when none got through (the check then fails loudly rather
     * than reads a count it could not take).
     */
    public long unsettled() {
        for (int tries = 0; tries < 8; tries++) {
            try {
                return participant.pendingTimestamps().size() + (long) backups.undecided();
            } catch (final java.util.ConcurrentModificationException | IndexOutOfBoundsException
                           | NullPointerException racing) {
                Thread.onSpinWait();
            }
        }
        return -1;
    }

    /** With backup tables here (replication on), pending versions past the lease become suspects. */
    private void checkReplication() {
        if (!replicationChecked) {
            replicationChecked = true;
            for (final Table t : db.tables()) {
                if (io.scythe.storage.BackupTables.backupOf(t.schema()) != 0) {
                    participant.orphans(ORPHAN_LEASE_NS, this::silent);
                    return;
                }
            }
        }
    }

    /** The orphan hint every reply carries: a suspect transaction's timestamp, or 0. */
    private long hint() {
        final long pending = participant.suspect();
        return pending != 0 ? pending : backups.suspect();
    }

    ParticipantService register(final RpcServer server) {
        server.handle(AurogonRpc.READ, this::read);
        server.handle(AurogonRpc.INSTALL, this::install);
        server.handle(AurogonRpc.COMMIT, this::commit);
        server.handle(AurogonRpc.ROLLBACK, this::rollback);
        server.handle(AurogonRpc.INSERT, this::insert);
        server.handle(AurogonRpc.READ_MORE, this::readMore);
        server.handle(AurogonRpc.STAGE, this::stage);
        server.handle(AurogonRpc.REPLICATE, this::replicate);
        server.handle(AurogonRpc.HOLDS, this::holds);
        server.handle(AurogonRpc.FETCH, this::fetch);
        server.handle(AurogonRpc.APPLY, (request, responder) -> decide(request, responder, true));
        server.handle(AurogonRpc.DISCARD, (request, responder) -> decide(request, responder, false));
        server.handle(AurogonRpc.SUSPECTS, this::suspects);
        server.handle(AurogonRpc.CLOCK, this::clock);
        server.handle(AurogonRpc.HEARTBEAT, this::heartbeat);
        server.handle(AurogonRpc.COMMITTED_AT, this::committedAt);
        server.handle(AurogonRpc.COPY, this::copy);
        server.handle(AurogonRpc.PENDING, this::pending);
        return this;
    }

    /**
     * COPY: re-replication's write of a key's newest committed version (as the primary's object holds it: the wts
     * and the value, or deleted) onto a rejoining copy here, by {@link #applyToBackup}'s rule, on this loop: a newer
     * write (an APPLY of a commit of the rejoin epoch) is never overwritten, an older one is, so a copy and the APPLYs
     * of concurrent commits commute and the copy ends at the larger wts. The rts is not copied: a backup keeps none
     * (reads reach only the primary), a promotion floors every version's ({@link #promoteOnCluster}). Why a COPY
     * rather than the one-sided image write other protocols re-replicate by ({@code ReReplicator}): Aurogon's commits
     * lock no object header, so a one-sided write could land between an APPLY's check of the copy's version and its
     * write, and leave an older image over the newer one.
     */
    private void copy(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = request.payloadLength() - AurogonRpc.HEADER_BYTES;
        final int valueLength = length < 0 ? 0 : p.getInt(at + AurogonRpc.LENGTH_OFFSET);
        if (length < 0 || (valueLength == AurogonRpc.DELETE ? length != 0 : valueLength != length)) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon COPY takes " + AurogonRpc.HEADER_BYTES + " bytes and the "
                + "value its length word names (" + valueLength + "), got " + request.payloadLength());
            return;
        }
        final int tableId = p.getInt(at + AurogonRpc.TABLE_OFFSET);
        if (participant.promoted(tableId)) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon COPY to table " + tableId + ", a promoted copy: it is a "
                + "primary now, not a rejoining copy");
            return;
        }
        if (rejoined) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon COPY to table " + tableId + " after this node rejoined: "
                + "its copies are full, the COPY is a late one of an abandoned re-replication (its deletes may be "
                + "pruned here, so it could revive a deleted key)");
            return;
        }
        // Checked before anything changes (issue 20/23 review, finding 8): applyToBackup drops the key's delete
        // entry before its write-through, which would then refuse the length, leaving the key revivable below it.
        final io.scythe.storage.Table target = db.table(tableId);
        if (valueLength != AurogonRpc.DELETE && target != null && !target.lengthOk(valueLength)) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon COPY of a value of " + valueLength + " bytes to table "
                + tableId + ", whose values take " + (target.schema().fixedSize() ? "exactly " : "at most ")
                + target.schema().maxValueBytes());
            return;
        }
        byte[] value = null;
        if (valueLength != AurogonRpc.DELETE) {
            value = new byte[valueLength];
            p.getBytes(at + AurogonRpc.HEADER_BYTES, value);
        }
        try {
            applyToBackup(tableId, p.getLong(at + AurogonRpc.KEY_OFFSET), p.getLong(at + AurogonRpc.TS_OFFSET), value);
        } catch (final IllegalStateException e) {
            responder.fail(AurogonRpc.BAD_REQUEST, e.getMessage());
            return;
        }
        status(responder, Participant.OK);
    }

    /**
     * PENDING: whether a version of the key is pending in this primary's participant (a rejoining copy's
     * re-replication, its R1: a pending version is invisible in the object, and its commit, by a coordinator of an
     * older configuration or by a recovery, never writes the rejoining copy; issue 20/23 review, finding 1).
     */
    private void pending(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "PENDING")) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            final boolean held = participant.pending(p.getInt(at + AurogonRpc.TABLE_OFFSET),
                p.getLong(at + AurogonRpc.KEY_OFFSET));
            status(responder, held ? AurogonRpc.PENDING_HELD : Participant.OK);
        }
    }

    private void defer(final long delayNs, final Runnable task) {
        timers().after(delayNs).onComplete(done -> task.run());
    }

    private static boolean wellFormed(final RpcRequest request, final RpcResponder responder, final int length,
                                      final String what) {
        if (request.payloadLength() != length) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon " + what + " takes " + length + " bytes, got "
                + request.payloadLength());
            return false;
        }
        return true;
    }

    private void read(final RpcRequest request, final RpcResponder responder) {
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "READ")) {
            return;
        }
        checkReplication();
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        heard(request.client(), p.getLong(at + AurogonRpc.TS_OFFSET));
        if (!servesAsPrimary(p.getInt(at + AurogonRpc.TABLE_OFFSET))) {
            replyValue(responder, Participant.NOT_PRIMARY, 0, null, 0);
            return;
        }
        final long ts = p.getLong(at + AurogonRpc.TS_OFFSET);
        final int flags = p.getInt(at + AurogonRpc.FLAGS_OFFSET);
        final boolean preattach = (flags & Participant.FLAG_PREATTACH) != 0;
        final String client = request.client();
        if (preattach && refused(ts, client)) {
            // A pre-attaching read installs a pending version as an INSTALL does: refused alike (review of f0fa52f7:
            // else a successor's read-for-update at or below the mark went in, and its INSTALLs with it).
            replyValue(responder, Participant.STALE, floorFor(ts), null, 0);
            return;
        }
        participant.read(p.getInt(at + AurogonRpc.TABLE_OFFSET), p.getLong(at + AurogonRpc.KEY_OFFSET), ts, flags,
            (status, wts, value) -> {
                if (preattach && status == Participant.OK) {
                    owns(ts, client);
                }
                replyValue(responder, status, wts, status == Participant.OK ? value : null, 0);
            });
        if (preattach) {
            // Its version is pending from here on (the install rule ran before the read parked or was deferred):
            // owned now, not at the answer, or another incarnation's INSTALL at ts in between was taken as the
            // first and owned the reader's version. No-op if the pre-attach was refused or ts was owned already.
            owns(ts, client);
        }
    }

    /** A live coordinator's heartbeat: heard, so its transactions pending here are no suspects for a lease. */
    private void heartbeat(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "HEARTBEAT")) {
            heard(request.client(), request.payload().getLong(request.payloadOffset() + AurogonRpc.TS_OFFSET));
            status(responder, participant.watching() || backups.watching() ? AurogonRpc.WATCHING : Participant.OK);
        }
    }

    private io.scythe.bridge.NodeClocks clocks;

    /** FaRMv2-clock's sync: this node's host clock, read by its CPU when it runs the request. */
    private void clock(final RpcRequest request, final RpcResponder responder) {
        if (clocks == null) {
            clocks = io.scythe.bridge.NodeClocks.onLoop(db.nic()); // this node's loop runs the handler
        }
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[16]);
        reply.putInt(0, Participant.OK);
        reply.putLong(8, clocks.hostNs());
        responder.reply(reply, 0, reply.capacity());
    }

    /** A part of one write of a transaction, held here as its backup. */
    private void replicate(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = request.payloadLength() - AurogonRpc.REPLICATE_HEADER_BYTES;
        if (length < 0) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon REPLICATE takes at least "
                + AurogonRpc.REPLICATE_HEADER_BYTES + " bytes, got " + request.payloadLength());
            return;
        }
        // The value's length is the sender's word: bounded by what a table here can hold before the backup allocates
        // it (a malformed or hostile REPLICATE named 2 GB and ran the node out of memory; RpcFuzzTest).
        final int valueLength = p.getInt(at + AurogonRpc.LENGTH_OFFSET);
        if (valueLength > largestValue()) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon REPLICATE of a value of " + valueLength + " bytes: no table"
                + " here holds more than " + largestValue());
            return;
        }
        if (servesNothing) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon REPLICATE reached memory node " + db.nic().node()
                + ", a replacement process of a cluster running another protocol: Aurogon serves nothing here");
            return;
        }
        if (participant.promoted(p.getInt(at + AurogonRpc.TABLE_OFFSET))
            && backups.committedTxn(p.getLong(at + AurogonRpc.TS_OFFSET),
                p.getLong(at + AurogonRpc.REPLICATE_TXN_OFFSET), p.getLong(at + AurogonRpc.REPLICATE_MASK_OFFSET),
                p.getInt(at + AurogonRpc.REPLICATE_EXPECTED_OFFSET))) {
            // A repost of a part of a transaction a recovery committed here (review of aurosplit4, 7): answered
            // COMMITTED as Backups.replicate answers it, never discarded (that rolled back its adopted versions on the
            // promoted copy) nor FENCED (which told its client "unknown" of a committed transaction).
            status(responder, Backups.COMMITTED);
            return;
        }
        if (participant.promoted(p.getInt(at + AurogonRpc.TABLE_OFFSET))
            && !backups.heldInFull(p.getLong(at + AurogonRpc.TS_OFFSET),
                p.getLong(at + AurogonRpc.REPLICATE_TXN_OFFSET), p.getLong(at + AurogonRpc.REPLICATE_MASK_OFFSET),
                p.getInt(at + AurogonRpc.REPLICATE_EXPECTED_OFFSET))) {
            // A write to a partition whose primary died after this attempt looked it up: its install there is gone,
            // so it may not commit: fenced, it aborts and runs again on this (promoted) copy.
            // A repost of a part of a transaction held here in full and undecided is not (issue 20, aurofix): the
            // promotion adopted its writes as pending versions here (its install survives), so it is decided as any
            // held transaction is, by those that decide it: its coordinator (this repost says it is alive; its
            // APPLY commits the adopted versions, its DISCARD, marked in node order, rolls them back) or, if it
            // dies, a recovery (every backup FULL: commit). The repost is held as on any backup (below). Before, it
            // was discarded and FENCED here, out of the node order the decisions are marked in: a recovery part-way
            // through its APPLYs of it (every backup FULL) was then refused here and the transaction split.
            discard(p.getLong(at + AurogonRpc.TS_OFFSET));
            status(responder, Backups.FENCED);
            return;
        }
        if (p.getLong(at + AurogonRpc.TS_OFFSET) < prunedBelow) {
            // Older than what deletedAt may have forgotten (a held transaction is never below it): its APPLY could
            // not be ordered by the key's own deletes any more, so it aborts and runs again with a new timestamp.
            staleReplications++;
            status(responder, Backups.STALE, Math.max(participant.maxTs(), prunedBelow)); // seen: the floor
            return;
        }
        final long replicated = p.getLong(at + AurogonRpc.TS_OFFSET);
        if (replicated <= deadUpTo[(int) (replicated & 0xffff)]
            && !backups.holdsTxn(replicated, p.getLong(at + AurogonRpc.REPLICATE_TXN_OFFSET))) {
            // Its coordinator id was told dead at or above it (coordinatorsDied): a successor's clock below what its
            // predecessor issued goes above it, and the attempt runs again (the predecessor itself is fenced). Not a
            // part of a transaction already held here: a repost of a part held (a reply lost), or a new part of it
            // (another key; not limited to reposts): the hold answers it as before (COMMITTED once a recovery committed
            // it, FENCED once it was rolled back), else the coordinator would run again under a new
            // timestamp while the backups hold the old one, which a recovery may commit (the writes applied twice, or
            // a committed transaction reported aborted).
            staleReplications++;
            status(responder, Backups.STALE, deadUpTo[(int) (replicated & 0xffff)]);
            return;
        }
        final byte[] part = new byte[length];
        p.getBytes(at + AurogonRpc.REPLICATE_HEADER_BYTES, part);
        heard(request.client(), p.getLong(at + AurogonRpc.TS_OFFSET));
        final int status;
        try {
            status = backups.replicate(p.getLong(at + AurogonRpc.TS_OFFSET),
                p.getLong(at + AurogonRpc.REPLICATE_LOW_OFFSET), p.getLong(at + AurogonRpc.REPLICATE_TXN_OFFSET),
                p.getLong(at + AurogonRpc.REPLICATE_MASK_OFFSET), p.getInt(at + AurogonRpc.REPLICATE_EXPECTED_OFFSET),
                p.getInt(at + AurogonRpc.TABLE_OFFSET), p.getLong(at + AurogonRpc.KEY_OFFSET),
                p.getInt(at + AurogonRpc.LENGTH_OFFSET), p.getInt(at + AurogonRpc.REPLICATE_OFFSET_OFFSET), part);
        } catch (final IllegalArgumentException e) {
            responder.fail(AurogonRpc.BAD_REQUEST, e.getMessage());
            return;
        }
        if (status == Backups.STALE) { // at or below what the backups forgot of its coordinator: the same floor rule
            staleReplications++;
            status(responder, status, Math.max(participant.maxTs(), backups.forgottenUpTo(
                p.getLong(at + AurogonRpc.TS_OFFSET))));
            return;
        }
        status(responder, status);
    }

    /** The largest value any table of this node holds (tables are created before requests arrive; backups later). */
    private int largestValue() {
        int max = 0;
        for (final io.scythe.storage.Table t : db.tables()) {
            max = Math.max(max, t.schema().maxValueBytes());
        }
        return max;
    }

    private void holds(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "HOLDS")) {
            final Backups.Holding h = backups.holds(request.payload().getLong(request.payloadOffset()
                + AurogonRpc.TS_OFFSET));
            final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.HOLDS_REPLY_BYTES]);
            reply.putInt(0, h.state());
            reply.putInt(4, h.entries());
            reply.putLong(8, h.mask());
            reply.putLong(AurogonRpc.HOLDS_REPLY_TXN_OFFSET, h.txnId());
            responder.reply(reply, 0, reply.capacity());
        }
    }

    /** One write a transaction replicated here, from an offset of its value (what a recovery commits). */
    private void fetch(final RpcRequest request, final RpcResponder responder) {
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "FETCH")) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Backups.Entry e = backups.entry(p.getLong(at + AurogonRpc.TS_OFFSET), p.getInt(at));
        final int from = p.getInt(at + 4);
        final int total = e == null || e.value() == null ? 0 : e.value().length;
        if (from < 0 || from > total) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon FETCH from " + from + " of a value of " + total
                + " bytes");
            return;
        }
        final int part = Math.min(total - from, responder.maxReplyBytes() - AurogonRpc.FETCH_REPLY_HEADER_BYTES);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.FETCH_REPLY_HEADER_BYTES + part]);
        reply.putInt(0, e == null ? Participant.NOT_FOUND : Participant.OK);
        if (e != null) {
            reply.putInt(4, e.value() == null ? AurogonRpc.DELETE : total);
            reply.putLong(8, e.key());
            reply.putInt(16, e.table());
            if (part > 0) {
                reply.putBytes(AurogonRpc.FETCH_REPLY_HEADER_BYTES, e.value(), from, part);
            }
        }
        responder.reply(reply, 0, reply.capacity());
    }

    private void decide(final RpcRequest request, final RpcResponder responder, final boolean apply) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, apply ? "APPLY" : "DISCARD")) {
            final long ts = request.payload().getLong(request.payloadOffset() + AurogonRpc.TS_OFFSET);
            newestTs = Math.max(newestTs, ts);
            if (!apply) {
                status(responder, discard(ts));
                return;
            }
            // Every write is applied (a refusal on one promoted copy must not leave the others pending and the
            // transaction undecided); a promoted copy with no pending version for its write (a coordinator or
            // promotion bug) is reported, and its status is the reply.
            applyRefusal = null;
            int status = backups.apply(ts);
            if (applyRefusal != null) {
                System.err.println(applyRefusal.message());
                status = applyRefusal.status;
                applyRefusal = null;
            }
            status(responder, status);
        }
    }

    /**
     * The transaction at {@code ts} is rolled back here: its writes held for promoted copies were adopted there as
     * pending versions ({@link #promote}) and are rolled back first (else a reader parks on them for ever), then the
     * held writes are dropped.
     */
    private int discard(final long ts) {
        for (final Backups.Entry e : backups.heldEntries(ts)) {
            if (participant.promoted(e.table())) {
                participant.rollback(e.table(), e.key(), ts);
            }
        }
        return backups.discard(ts);
    }

    /** The first write of the APPLY being served that found no pending version on a promoted copy, else null. */
    private ApplyRefused applyRefusal;

    /** An APPLY's write that found no pending version to commit on a promoted copy: its status is the reply. */
    private record ApplyRefused(String message, int status) {
    }

    private void committedAt(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "COMMITTED_AT")) {
            final long ts = request.payload().getLong(request.payloadOffset() + AurogonRpc.TS_OFFSET);
            records(responder, participant.committedAt(ts),
                mayStillCommit(ts) ? AurogonRpc.COMMITTED_AT_COORDINATOR_LIVE : 0, AurogonRpc.COMMITTED_AT_TRUNCATED);
        }
    }

    private void suspects(final RpcRequest request, final RpcResponder responder) {
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "SUSPECTS")) {
            return;
        }
        final long ts = request.payload().getLong(request.payloadOffset() + AurogonRpc.TS_OFFSET);
        records(responder, participant.suspectsAt(ts), backups.held(ts) ? AurogonRpc.SUSPECTS_HELD : 0,
            AurogonRpc.SUSPECTS_TRUNCATED);
    }

    /**
     * Answers 0 count, 4 {@code flags}, 8 count x (table id i32, key i64): as many of {@code records} as fit, and
     * {@code truncated} or'ed into the flags when some did not.
     */
    private static void records(final RpcResponder responder, final java.util.List<long[]> records, final int flags,
                                final int truncated) {
        final int fit = Math.min(records.size(), (responder.maxReplyBytes() - 8) / AurogonRpc.SUSPECT_BYTES);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[8 + fit * AurogonRpc.SUSPECT_BYTES]);
        reply.putInt(0, fit);
        reply.putInt(4, flags | (fit < records.size() ? truncated : 0));
        for (int i = 0; i < fit; i++) {
            reply.putInt(8 + i * AurogonRpc.SUSPECT_BYTES, (int) records.get(i)[0]);
            reply.putLong(12 + i * AurogonRpc.SUSPECT_BYTES, records.get(i)[1]);
        }
        responder.reply(reply, 0, reply.capacity());
    }

    /**
     * Memory-node failover: this node's copies {@code tables} (ids here) are the primaries now, their primary dead with
     * its versions and rts. Every version they hold, now or loaded later, is read-floored at {@code floorTs} (the
     * largest timestamp any coordinator had issued: every read the dead primary answered was below it); the
     * transactions held here in full become pending versions of the promoted copies (the dead primary had them
     * installed, and maybe committed: the coordinator's APPLY commits them here, its DISCARD rolls them back); those
     * held in part are fenced (their coordinator had not replicated everything, so it sent no COMMIT yet: it aborts).
     * On this node's loop, before any coordinator's catalog names the promoted copies.
     */
    public void promote(final java.util.Set<Integer> tables, final long floorTs) {
        // Every table checked before any is changed: a refused promotion leaves none half floored.
        for (final int table : tables) {
            final Table t = db.table(table);
            // A replacement process's copy 0 (rejoined as a backup) may be promoted back too.
            if (t == null || io.scythe.storage.BackupTables.backupOf(t.schema()) == 0 && !replacement) {
                throw new IllegalArgumentException("Aurogon promotion of table " + table + ", which is no backup "
                    + "table here");
            }
        }
        for (final int table : tables) {
            participant.promote(table, floorTs);
        }
        for (final java.util.Map.Entry<Long, java.util.List<Backups.Entry>> held : backups.heldNow().entrySet()) {
            if (held.getValue() == null) {
                backups.discard(held.getKey());
                continue;
            }
            for (final Backups.Entry e : held.getValue()) {
                if (tables.contains(e.table())) {
                    participant.adopt(e.table(), e.key(), held.getKey());
                }
            }
        }
    }

    /**
     * Whether this node serves table {@code tableId} as a primary: a copy loaded as primary (an id below
     * {@code BackupTables.ID_STRIDE}) on a node that is no replacement process, or a copy promoted here. A READ,
     * READ_MORE, INSTALL or INSERT naming any other is answered {@link Participant#NOT_PRIMARY}: a coordinator whose
     * catalog promoted a backup copy before this node ran its promotion ({@link #promoteOnCluster}: the read floor and
     * the adoption of held transactions) must not be served from it.
     */
    boolean servesAsPrimary(final int tableId) {
        // A table not held here is no NOT_PRIMARY: the request goes on to its NOT_FOUND answer.
        return db.table(tableId) == null || tableId < io.scythe.storage.BackupTables.ID_STRIDE && !replacement || participant.promoted(tableId);
    }

    /** Set on a replacement process ({@link #replacement()}): none of its copies serves as primary until promoted. */
    private volatile boolean replacement;

    /**
     * This node is a replacement process rejoining a cluster (its copies come back as backups, re-replicated): none of
     * its copies serves as a primary until a configuration promotes one ({@link #promoteOnCluster}), and its copy 0
     * takes APPLYs as a backup.
     */
    public void replacement() {
        replacement(clusterFloor(db.nic().nicClockNs(), 0));
    }

    /**
     * {@link #replacement()}, born at {@code floor}: a timestamp at or below it may be one its predecessor held, so a
     * recovery's HOLDS of one held nothing of here answers {@link Backups#NOT_HERE} (the share lost with the
     * predecessor), never ABORTED (a fence here says nothing of what the predecessor acknowledged). Cluster mode takes it from
     * {@code AurogonModule#replacementFloor}, which refuses a replacement when the clocks give no bound; {@link
     * #replacement()} (tests) is born at this node's NIC clock now (no bound). A REPLICATE at or below the floor of a
     * transaction not held here is refused ({@link Backups#STALE}): NOT_HERE stays the answer for it.
     */
    public void replacement(final long floor) {
        replacement = true;
        servesNothing = floor == Long.MAX_VALUE;
        backups.bornAt(floor);
    }

    /**
     * Set on a replacement process of a cluster running another protocol ({@code AurogonModule#replacementFloor}: born
     * at Long.MAX_VALUE, this participant serves nothing): an Aurogon REPLICATE reaching it fails loudly rather than
     * being refused STALE with Long.MAX_VALUE as the floor, which would floor its coordinator's clock there for good.
     */
    private volatile boolean servesNothing;

    /**
     * Set once this replacement's copies are full copies ({@link #rejoined()}): its delete pruning runs from then on,
     * and a COPY is refused.
     */
    private volatile boolean rejoined;

    /**
     * This replacement process rejoined: a configuration no longer lists it as rejoining, so its re-replication
     * finished (every COPY of the run that completed was answered before that configuration was made). From now on
     * its deletedAt entries are pruned as on any node ({@link #pruneDeletes}, held until now), and a COPY, which can
     * only come from an abandoned re-replication run, is refused: applied after the pruning, it could revive a key
     * whose delete was forgotten. Any thread (the host's configuration watcher); read on this node's loop.
     */
    public void rejoined() {
        rejoined = true;
    }

    /**
     * Whether delete pruning is held: on a replacement process until it rejoined (issue 20, review finding 5). A COPY
     * carries the primary's version as re-replication's R1 read it, and may arrive any time later (reposted, queued);
     * a delete of the key committed after R1 reaches this copy by its APPLY, and only its deletedAt entry (the key
     * absent here, or its tombstone reclaimed) stops the late COPY from reviving the key. Pruned, the entry is gone
     * and the key comes back live here while the primary has freed it (R2 then reads again, finds the slot freed and
     * copies nothing). Refusing a COPY below {@link #prunedBelow} is no fix: every old live key's version is below
     * it, so the copy of every key not written lately would be refused for ever. Deciding by the time of R1 (the
     * COPY carrying it) would need that time to bound the wts of every delete committed after R1, which a one-sided
     * read does not give in MV T/O (a write at a timestamp below it may still install and commit after it, unless
     * R1 became a participant read raising the version's rts: every key of the partition loaded into the primary's
     * participant, and writers below R1 aborted, for the whole copy). Holding the pruning restores, while the copy
     * runs, what the paper has anyway (it keeps no such map and prunes nothing), on the rejoining node only: one
     * entry per key deleted during the rejoin, dropped by the first sweep after it. A rejoin that never finishes (a
     * value too long for one COPY keeps it rejoining) keeps the hold: its deletes' entries stay for the process's life.
     */
    private boolean pruningHeld() {
        return replacement && !rejoined;
    }

    /**
     * The read floor of a promotion on a cluster node (a deviation: the simulator's gathers every live coordinator's
     * last timestamp, {@link AurogonModule#promoted}; see the package doc): {@code clockNs + boundNs}, as a timestamp
     * above every timestamp of that clock reading (the largest server and loop ids). Every read the dead primary
     * answered was at a timestamp issued before {@code clockNs} was read (the promotion runs once every live compute
     * node applied the configuration that removed it), and each is a clock reading at most {@code boundNs} above any
     * memory node's NIC clock at the time (2LClock's error and the spread of the NIC clocks it maps onto).
     */
    static long clusterFloor(final long clockNs, final long boundNs) {
        if (boundNs < 0) {
            throw new IllegalArgumentException("clock bound " + boundNs + " ns must not be negative");
        }
        return AurogonTimestamp.pack(clockNs + boundNs, AurogonTimestamp.MAX_SERVER, AurogonTimestamp.MAX_LOOP);
    }

    /**
     * Cluster mode's promotion of this node's copies {@code tables} (ids here): {@link #promote} with the read floor
     * {@link #clusterFloor}({@code clockNs}, {@code boundNs}), never below the largest timestamp this node saw. On
     * this node's loop, once every live compute node applied the configuration that promoted them; until then their
     * READs and INSTALLs are answered {@link Participant#NOT_PRIMARY} ({@link #servesAsPrimary}).
     *
     * @return the floor taken
     */
    public long promoteOnCluster(final java.util.Set<Integer> tables, final long clockNs, final long boundNs) {
        final long floor = Math.max(clusterFloor(clockNs, boundNs), participant.maxTs());
        promote(tables, floor);
        return floor;
    }

    /**
     * A committed write of a transaction this node backs up, into its backup table unless a newer one is there; on a
     * promoted copy, the commit of the pending version it was adopted as ({@link #promote}).
     */
    private void applyToBackup(final int tableId, final long key, final long wts, final byte[] value) {
        if (participant.promoted(tableId)) {
            final int status = participant.commit(tableId, key, wts, value);
            // Committed already: a recovery that marked this promoted copy earlier (its APPLY commits the adopted
            // version), or whose COMMIT of it came first.
            if (status != Participant.OK && !participant.committedAt(tableId, key, wts) && applyRefusal == null) {
                applyRefusal = new ApplyRefused("Aurogon APPLY at " + AurogonTimestamp.toString(wts) + " to promoted "
                    + tableId + "/" + key + ": no pending version adopted there (status " + status + ")", status);
            }
            return;
        }
        final Table table = db.table(tableId);
        if (table == null || io.scythe.storage.BackupTables.backupOf(table.schema()) == 0 && !replacement) {
            // A replacement process's copy 0 rejoined as a backup of its partition (MemoryNodeConfiguration#rejoin).
            throw new IllegalStateException("Aurogon APPLY to table " + tableId + ", which is no backup table here");
        }
        final org.agrona.collections.Long2LongHashMap deletes = deletedAt.computeIfAbsent(tableId,
            id -> new org.agrona.collections.Long2LongHashMap(0));
        final long pointer = table.lookup(key);
        final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
        final boolean live = at >= 0 && (table.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
            & ObjectLayout.FLAG_DELETED) == 0;
        final long current = Math.max(deletes.get(key), at < 0 ? 0
            : table.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY);
        if (wts <= current) {
            return; // a newer write (or delete) of the key is applied here
        }
        if (value == null) {
            pruneDeletes();
            deletes.put(key, wts);
            if (live) {
                writeThrough(table, key, wts, null);
            }
            return; // absent here already (its insert not applied yet, or its tombstone reclaimed)
        }
        deletes.remove(key);
        writeThrough(table, key, wts, value);
    }

    /**
     * Per backup table, the version each key was last deleted at by an APPLY, while no newer insert was applied: the
     * APPLYs of different transactions reach a backup in any order (a recovery's a lease late), so an older insert
     * arriving after the delete must find it, whether the tombstone was reclaimed or never written (the insert not
     * applied yet: a delete of an absent key wrote nothing). Before, an absent key stood at the table's absent bound:
     * 0 when its delete found no object (the late insert went in: a key live on the backup, absent on the primary,
     * explorer phantom seed 16, churn seed 75), else the largest version of any key reclaimed there (a late insert of
     * a new key at an older timestamp was skipped: tpcc's new_order rows missing on a backup, seeds 7, 52, 77). One
     * entry per key deleted and not inserted again, dropped once no APPLY can need it ({@link #pruneDeletes}; it was
     * never dropped: one entry per TPC-C delivery for the life of a bench).
     */
    private final org.agrona.collections.Int2ObjectHashMap<org.agrona.collections.Long2LongHashMap> deletedAt =
        new org.agrona.collections.Int2ObjectHashMap<>(); // by table id: no boxed key per APPLY

    /**
     * How far behind the newest timestamp this node has seen a deletedAt entry may fall before it is dropped (unless
     * a transaction held here is older): four leases, above the orphan lease and the 4 ms call bound of a crash run,
     * and far above a transaction's lifetime (tens of microseconds in the runs measured).
     */
    static final long PRUNE_LAG_NS = 4 * ORPHAN_LEASE_NS;

    /** The largest timestamp any request (a coordinator's own, or an APPLY or DISCARD) carried here. */
    private long newestTs;
    /**
     * deletedAt has forgotten entries below this timestamp; a REPLICATE below it is refused ({@link Backups#STALE}).
     * Never above the oldest transaction held here when it was raised, so no held transaction is ever below it.
     */
    private long prunedBelow;
    /** The clock reading (of {@link #newestTs}) at the last sweep of deletedAt. */
    private long sweptAtNs = Long.MIN_VALUE;
    /** REPLICATEs refused for being older than {@link #prunedBelow} (tests, reports). */
    private long staleReplications;

    /**
     * Drops the deletedAt entries no APPLY can need any more, at most once a lease of {@link #newestTs}'s clock. An
     * entry (key deleted at d) orders only an APPLY of a write of the key at a timestamp below d; an APPLY applies
     * only what this node holds (a coordinator replicates every write to the backups before any COMMIT, and applies
     * after: {@link Backups#apply}), so such a write is held here now, or its REPLICATE is still to come. The horizon
     * is the oldest transaction held here, and no more than {@link #PRUNE_LAG_NS} behind the newest timestamp seen;
     * entries below it go, and from then on a REPLICATE below it is refused ({@link Backups#STALE}: its attempt aborts
     * and runs again, its coordinator's clock floored above the horizon, so a clock lagging that far is not refused for
     * good), so the held ones and every one admitted later are above every forgotten entry. A dead coordinator's
     * transaction is decided only from what the backups hold (a recovery fences the rest), so no late one is lost;
     * a live one whose first REPLICATE here came {@link #PRUNE_LAG_NS} after a newer timestamp pays an abort. Held on
     * a replacement process until it rejoined ({@link #pruningHeld}: a late COPY needs the entries).
     */
    private void pruneDeletes() {
        if (pruningHeld()) {
            return;
        }
        final long newestNs = AurogonTimestamp.clockNs(newestTs);
        if (newestTs == 0 || sweptAtNs != Long.MIN_VALUE && newestNs - sweptAtNs < ORPHAN_LEASE_NS) {
            return;
        }
        sweptAtNs = newestNs;
        final long lagged = newestNs - PRUNE_LAG_NS + AurogonTimestamp.BIAS_NS <= 0 ? 0
            : AurogonTimestamp.pack(newestNs - PRUNE_LAG_NS, 0, 0);
        final long horizon = Math.min(backups.oldestHeld(), lagged);
        if (horizon <= prunedBelow) {
            return;
        }
        prunedBelow = horizon;
        for (final org.agrona.collections.Long2LongHashMap deletes : deletedAt.values()) {
            deletes.values().removeIf(wts -> wts < horizon);
        }
    }

    /** The version {@code key} of backup table {@code tableId} was last deleted at, while remembered (tests). */
    long deletedAt(final int tableId, final long key) {
        final org.agrona.collections.Long2LongHashMap deletes = deletedAt.get(tableId);
        return deletes == null ? 0 : deletes.get(key);
    }

    /** How many deletedAt entries this node keeps (tests, reports). */
    int deletedAtEntries() {
        int n = 0;
        for (final org.agrona.collections.Long2LongHashMap deletes : deletedAt.values()) {
            n += deletes.size();
        }
        return n;
    }

    long staleReplications() {
        return staleReplications;
    }

    /** The rest of a value a READ answered in part: from an offset of the committed version at a wts. */
    private void readMore(final RpcRequest request, final RpcResponder responder) {
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "READ_MORE")) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final long wts = p.getLong(at + AurogonRpc.TS_OFFSET);
        if (!servesAsPrimary(p.getInt(at + AurogonRpc.TABLE_OFFSET))) {
            replyValue(responder, Participant.NOT_PRIMARY, wts, null, 0);
            return;
        }
        final byte[] value = participant.committedValue(p.getInt(at + AurogonRpc.TABLE_OFFSET),
            p.getLong(at + AurogonRpc.KEY_OFFSET), wts);
        final int from = p.getInt(at + AurogonRpc.FLAGS_OFFSET);
        if (value != null && (from <= 0 || from >= value.length)) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon READ_MORE from " + from + " of a value of "
                + value.length + " bytes");
            return;
        }
        replyValue(responder, value == null ? Participant.TOO_OLD : Participant.OK, wts, value, from);
    }

    /**
     * A READ-format reply: the value's total length and its bytes from {@code from}, as many as fit one reply
     * (package-private: a test holds a READ's answer back and sends it so).
     */
    void replyValue(final RpcResponder responder, final int status, final long wts, final byte[] value,
                    final int from) {
        final int total = value == null ? 0 : value.length; // ABSENT, errors: no value
        final int part = Math.min(total - from, responder.maxReplyBytes() - AurogonRpc.READ_REPLY_HEADER_BYTES);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.READ_REPLY_HEADER_BYTES + part]);
        reply.putInt(0, status);
        reply.putInt(4, total);
        reply.putLong(8, wts);
        reply.putLong(AurogonRpc.READ_SEEN_OFFSET, participant.maxTs());
        reply.putLong(AurogonRpc.READ_HINT_OFFSET, hint());
        if (part > 0) {
            reply.putBytes(AurogonRpc.READ_REPLY_HEADER_BYTES, value, from, part);
        }
        responder.reply(reply, 0, reply.capacity());
    }

    /** A part of a value too long for one COMMIT, staged with its pending version. */
    private void stage(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = request.payloadLength() - AurogonRpc.STAGE_HEADER_BYTES;
        if (length <= 0) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon STAGE takes more than " + AurogonRpc.STAGE_HEADER_BYTES
                + " bytes, got " + request.payloadLength());
            return;
        }
        final byte[] part = new byte[length];
        p.getBytes(at + AurogonRpc.STAGE_HEADER_BYTES, part);
        status(responder, participant.stage(p.getInt(at + AurogonRpc.TABLE_OFFSET),
            p.getLong(at + AurogonRpc.KEY_OFFSET), p.getLong(at + AurogonRpc.TS_OFFSET),
            p.getInt(at + AurogonRpc.LENGTH_OFFSET), p.getInt(at + AurogonRpc.STAGE_OFFSET), part));
    }

    private void install(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "INSTALL")) {
            checkReplication();
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            heard(request.client(), p.getLong(at + AurogonRpc.TS_OFFSET));
            if (!servesAsPrimary(p.getInt(at))) {
                status(responder, Participant.NOT_PRIMARY);
                return;
            }
            final long ts = p.getLong(at + AurogonRpc.TS_OFFSET);
            if (refused(ts, request.client())) {
                status(responder, Participant.STALE, floorFor(ts));
                return;
            }
            final int status = participant.install(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET), ts,
                p.getInt(at + AurogonRpc.FLAGS_OFFSET));
            if (status == Participant.OK) {
                owns(ts, request.client());
            }
            status(responder, status);
        }
    }

    private void insert(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "INSERT")) {
            checkReplication();
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            heard(request.client(), p.getLong(at + AurogonRpc.TS_OFFSET));
            if (!servesAsPrimary(p.getInt(at))) {
                status(responder, Participant.NOT_PRIMARY);
                return;
            }
            final long[] below = new long[1];
            final long ts = p.getLong(at + AurogonRpc.TS_OFFSET);
            final boolean stale = refused(ts, request.client());
            final int status = stale ? Participant.STALE
                : participant.insert(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET), ts, below,
                    p.getInt(at + AurogonRpc.FLAGS_OFFSET));
            if (status == Participant.OK) {
                owns(ts, request.client());
            }
            final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.INSERT_REPLY_BYTES]);
            reply.putInt(0, status);
            reply.putLong(AurogonRpc.STATUS_SEEN_OFFSET, stale ? floorFor(ts) : seen(status));
            reply.putLong(AurogonRpc.STATUS_HINT_OFFSET, hint());
            reply.putLong(AurogonRpc.INSERT_BELOW_OFFSET, below[0]);
            responder.reply(reply, 0, reply.capacity());
        }
    }

    private void commit(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = request.payloadLength() < AurogonRpc.HEADER_BYTES ? Integer.MIN_VALUE
            : p.getInt(at + AurogonRpc.LENGTH_OFFSET);
        if (length < AurogonRpc.DELETE) {
            responder.fail(AurogonRpc.BAD_REQUEST, "malformed Aurogon COMMIT");
            return;
        }
        final int carried = request.payloadLength() - AurogonRpc.HEADER_BYTES;
        if (carried < 0 || carried > Math.max(length, 0)) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon COMMIT of a value of " + length + " bytes carries "
                + carried);
            return;
        }
        final boolean byRecovery = (p.getInt(at) & AurogonRpc.BY_RECOVERY) != 0;
        final int table = p.getInt(at) & ~AurogonRpc.BY_RECOVERY;
        final long key = p.getLong(at + AurogonRpc.KEY_OFFSET);
        final long ts = p.getLong(at + AurogonRpc.TS_OFFSET);
        if (!byRecovery) {
            heard(request.client(), ts);
            if (anotherOwns(ts, request.client())) { // never its version: the one pending at ts is another's
                status(responder, Participant.STALE, floorFor(ts));
                return;
            }
        }
        final byte[] value;
        if (length == AurogonRpc.DELETE) {
            value = null;
        } else if (carried == length) {
            value = new byte[length];
        } else { // the value's first bytes were staged: the COMMIT carries its last ones
            value = participant.staged(table, key, ts, length, length - carried);
            if (value == null) {
                status(responder, byRecovery ? participant.seenByRecovery(table, key, ts)
                    : participant.decided(table, key, ts));
                return;
            }
        }
        if (carried > 0) {
            p.getBytes(at + AurogonRpc.HEADER_BYTES, value, length - carried, carried);
        }
        status(responder, participant.commit(table, key, ts, value, byRecovery));
    }

    private void rollback(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "ROLLBACK")) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            final long ts = p.getLong(at + AurogonRpc.TS_OFFSET);
            if ((p.getInt(at) & AurogonRpc.BY_RECOVERY) == 0 && anotherOwns(ts, request.client())) {
                // The version pending at ts is another incarnation's: the sender's was never installed here.
                status(responder, Participant.OK);
                return;
            }
            status(responder, participant.rollback(p.getInt(at) & ~AurogonRpc.BY_RECOVERY,
                p.getLong(at + AurogonRpc.KEY_OFFSET), ts));
        }
    }

    private void status(final RpcResponder responder, final int status) {
        status(responder, status, seen(status));
    }

    /**
     * The seen timestamp a reply of {@code status} carries: a participant's own STALE (an install at or below its
     * tombstones' watermark) its floor, SPS_IMMORTAL the committed version above the refused write; else the largest
     * timestamp seen here.
     */
    private long seen(final int status) {
        return status == Participant.STALE ? participant.staleFloor()
            : status == Participant.SPS_IMMORTAL ? participant.immortalFloor() : participant.maxTs();
    }

    /** A status reply whose seen timestamp is {@code seen} (a STALE refusal's floor). */
    private void status(final RpcResponder responder, final int status, final long seen) {
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.STATUS_REPLY_BYTES]);
        reply.putInt(0, status);
        reply.putLong(AurogonRpc.STATUS_SEEN_OFFSET, seen);
        reply.putLong(AurogonRpc.STATUS_HINT_OFFSET, hint());
        responder.reply(reply, 0, reply.capacity());
    }

    /** Records start from the LogDB object; the newest committed value is written back into it. */
    private final class LogDbBacking implements Participant.Backing {
        @Override
        public boolean hasTable(final int tableId) {
            return db.table(tableId) != null;
        }

        @Override
        public byte[] load(final int tableId, final long key, final long[] version) {
            final Table table = db.table(tableId);
            final long pointer = table == null ? 0 : table.lookup(key);
            final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
            if (at < 0) {
                version[0] = table == null ? 0 : table.absentBound();
                return null;
            }
            final var memory = table.objectMemory();
            version[0] = memory.getLong(at + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
            if ((memory.getShort(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
                return null; // deleted at its version
            }
            final byte[] value = new byte[memory.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)];
            memory.getBytes(at + ObjectLayout.VALUE_OFFSET, value);
            return value;
        }

        @Override
        public void committed(final int tableId, final long key, final long wts, final byte[] value) {
            writeThrough(db.table(tableId), key, wts, value);
        }
    }

    /** Writes a committed value into a LogDB table, freeing LogDB's chain of older values when it is full. */
    private static void writeThrough(final Table table, final long key, final long wts, final byte[] value) {
        int status = writeOnce(table, key, wts, value);
        if (status == Table.VERSION_SPACE_FULL) {
            // LogDB's chain of old values serves no Aurogon read (the participant keeps its own versions): free
            // what is below this commit and write again.
            table.reclaim(wts);
            status = writeOnce(table, key, wts, value);
        }
        if (status != Table.OK) {
            throw new IllegalStateException("Aurogon could not write committed " + table.schema().name() + "/"
                + key + " through to LogDB: status " + status);
        }
    }

    /** A delete ({@code value} null), an insert or revival (no live object), or an update. */
    private static int writeOnce(final Table table, final long key, final long wts, final byte[] value) {
        if (value == null) {
            return table.delete(key, wts);
        }
        final long pointer = table.lookup(key);
        final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
        final boolean live = at >= 0 && (table.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
            & ObjectLayout.FLAG_DELETED) == 0;
        if (live) {
            return table.update(pointer, new UnsafeBuffer(value), 0, value.length, wts);
        }
        final long inserted = table.insert(key, new UnsafeBuffer(value), 0, value.length, wts);
        return inserted > 0 ? Table.OK : (int) inserted;
    }
}
