package io.scythe.txn.aurogon;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An Aurogon primary participant (§3, §4.1, Algorithm 1 lines 23-36): the multi-version timestamp-ordering rules run
 * by a memory node's CPU on the records of its shard. Sans-IO: requests come in as calls, answers go out through
 * callbacks (a read blocked on a pending version is answered later, when that version is decided), delays through a
 * {@link Deferrer}, and a record's first version and its newest committed value through a {@link Backing} (the node's
 * LogDB). Loop-confined: one memory-node loop calls it.
 *
 * <h2>Per record</h2>
 * A list of versions sorted by {@code wts} descending, each with its own {@code rts}, PENDING or COMMITTED, and a value
 * (none while a pre-attached write is pending); an 8-byte access counter ([10 ms window : 32][previous window's
 * requests : 16][this window's : 16]), the record's deferral time and its installs and refusals in the same two
 * windows, for its write failure rate (§4.2).
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li><b>Read R at ts</b>: when R carries a pre-attached write, install it first and answer {@link #REFUSED} at once
 *       if that fails (early abort, §4.3); when the record is hot and R may be deferred, wait the record's deferral
 *       time; then take the first version with {@code wts < ts} (strictly: T's own pre-attached version at ts is not
 *       in its way), raise its {@code rts} to {@code max(rts, ts)}, and answer with its value, or, when it is
 *       PENDING, park R on it: R is answered when it commits, or, when it is rolled back, R runs the rule again on
 *       the list without it (it may then park on an older pending version). Reads never fail (but see GC below).</li>
 *   <li><b>Install W at ts</b>: take the first version {@code v} with {@code v.wts <= ts}; fail ({@link #REFUSED}) when
 *       {@code v.wts <= ts < v.rts}: a read above ts already returned v; else insert a PENDING version
 *       {@code wts = rts = ts} before v. Installing at a ts already pending (the same write again, from the incarnation that made it pending:
 *       {@code ParticipantService} refuses another's) is a no-op.</li>
 *   <li><b>Commit</b> fills the value in, marks the version COMMITTED, answers the reads parked on it, and, when it
 *       is the newest committed version, writes it through to the backing store. <b>Rollback</b> removes the pending
 *       version (a rollback of nothing installed is a no-op) and re-runs its parked reads.</li>
 *   <li><b>Absence</b> is a version too: a key missing from the backing store starts as an absent version (at the
 *       store's bound), a delete commits one, and a read that selects one answers {@link #ABSENT} with its wts (its
 *       rts raised like any read's). An <b>insert</b> is an install over an absence that reads it: refused by the
 *       install rule, {@link #DUPLICATE} over a live value, refused over another's pending version (which may yet
 *       commit: the insert retries with a new timestamp), and on success it raises the absence's rts to its
 *       timestamp.</li>
 *   <li><b>Version GC</b> (the paper's policy is unspecified): a record keeps at most {@code maxVersions}; beyond,
 *       the oldest committed versions below the newest committed one go. A read that would need a version gone
 *       gets {@link #TOO_OLD} and an install below the oldest kept version is refused (its version's rts is gone):
 *       both abort the transaction. Never met in the runs measured (the bound is far above what a read lags).</li>
 * </ul>
 */
public final class Participant {
    public static final int OK = 0;
    /** The install rule refused the write (or the pre-attached write of a read). */
    public static final int REFUSED = -1;
    /** No such key (or table) on this node. */
    public static final int NOT_FOUND = -2;
    /** Commit or rollback of a version that is not pending (already decided: a coordinator bug). */
    public static final int NOT_PENDING = -3;
    /** The version the read needs was reclaimed (version GC). */
    public static final int TOO_OLD = -4;
    /** The version read is an absence (the key did not exist, or was deleted, at the read's timestamp). */
    public static final int ABSENT = -5;
    /** An insert found a live committed version below its timestamp: the key exists. */
    public static final int DUPLICATE = -6;
    /**
     * A read met a pending version older than the orphan lease ({@link #orphans}): its coordinator may be dead. The
     * answer's wts is that version's timestamp; the reader resolves it through the backups and reads again.
     */
    public static final int ORPHAN = -7;
    /**
     * A coordinator's READ, INSTALL or INSERT named a copy this node does not serve as primary (yet): a backup copy a
     * configuration promoted whose promotion has not run here ({@code ParticipantService#promoteOnCluster}), or a
     * replacement process's copy. Nothing was read or installed; the attempt aborts and runs again.
     */
    public static final int NOT_PRIMARY = -8;
    /**
     * A coordinator's INSTALL, INSERT or pre-attaching READ at or below the timestamp up to which the host told its
     * coordinator id dead ({@code ParticipantService#coordinatorsDied}), or at a timestamp pending here that another
     * incarnation (fabric identity) made pending: a successor incarnation's clock restarted below what its predecessor
     * issued. Nothing installed; the reply's seen timestamp is the larger of the mark and the request's timestamp, the
     * coordinator's clock is floored there and the attempt runs again above it. A COMMIT at a timestamp another
     * incarnation has pending is answered STALE too, and changes nothing. So is an install at or below the
     * tombstones' watermark ({@link #tombstoneRule}), its floor {@link #staleFloor()}.
     */
    public static final int STALE = -9;
    /**
     * A recovery's COMMIT found the version committed already, by its coordinator, and is the first recovery to see
     * it (so that recoveries can report every write of a dead coordinator once; later ones get {@link #NOT_PENDING}).
     */
    public static final int FIRST_SEEN = 1;
    /**
     * A coordinator's COMMIT (or STAGE) found its version committed already, at its own timestamp: a §4.5 recovery
     * committed it while the coordinator was paused past the orphan lease holding every acknowledgement (from complete
     * backups, or the lost-share path), or an earlier COMMIT of its own landed. A timestamp names one attempt, so the
     * version committed at it is this attempt's write, with its value: the commit is done. Distinct from
     * {@link #NOT_PENDING} (no version at the timestamp: rolled back, never installed, or reclaimed), which stays a
     * failed commit. A recovery's COMMIT is never answered this ({@link #FIRST_SEEN} or {@link #NOT_PENDING}).
     */
    public static final int COMMITTED_ALREADY = 2;
    /**
     * SPS (§4.4, {@link #FLAG_SPS}): a read found a COMMITTED version newer than the one below its timestamp, which it
     * may not return (rule 1: a stale read of a transaction that finished before it began, in real time). Nothing was
     * read; no rts raised when answered at once, while a read that parked on a pending version first raised that
     * version's rts (harmless: rule 2 refuses any write in that interval, a committed version being above it). The
     * answer's wts is the newest committed version's, where the coordinator floors its clock. A pre-attaching read's
     * pending version stays installed (its abort rolls it back). The attempt aborts and runs again.
     */
    public static final int SPS_STALE = -10;
    /**
     * SPS (§4.4 rule 2, {@link #FLAG_SPS}): a write (INSTALL, INSERT, or a pre-attaching READ's install) below a
     * COMMITTED version, which would be immortal (no later reader would see it). Nothing installed. The answer's wts
     * (a READ's) or seen timestamp (an INSTALL's or INSERT's) is that version's wts, {@link #immortalFloor()}: the
     * coordinator floors its clock there, so the next attempt writes above it (the paper does not say how a refused
     * write goes on; as rule 1's retry, aurogon23). Before, the refusal was a plain {@link #REFUSED} with no floor and
     * a loop lagging the writer by D retried below it until real time covered D.
     */
    public static final int SPS_IMMORTAL = -11;

    /** Read flag: install a pending version at the read's ts first (§4.3 pre-attaching). */
    public static final int FLAG_PREATTACH = 1;
    /** Read flag: never defer (a read that key-dependent requests wait for, §4.3). */
    public static final int FLAG_NO_DEFER = 2;
    /**
     * Read, INSTALL and INSERT flag: SPS's rules (§4.4, strong partition serializability): a read may not return a
     * version below a COMMITTED newer one ({@link #SPS_STALE}), and a write is {@link #REFUSED} when a COMMITTED
     * version above its timestamp exists (an immortal write: no reader would ever see it).
     */
    public static final int FLAG_SPS = 4;

    /** Where a record's first version comes from and where its newest committed value goes. */
    public interface Backing {
        /**
         * The value of {@code key} in {@code table}, its version in slot 0 of {@code version}; null when the key is
         * absent (deleted or never there: its version is then a bound of the absence).
         */
        byte[] load(int table, long key, long[] version);

        /** Whether this node holds a partition of {@code table}. */
        boolean hasTable(int table);

        /** {@code value} at {@code wts} is now the newest committed version of {@code key} ({@code null}: deleted). */
        void committed(int table, long key, long wts, byte[] value);
    }

    /** Runs a task later on the participant's loop. */
    @FunctionalInterface
    public interface Deferrer {
        void after(long delayNs, Runnable task);
    }

    /** The answer to one read: {@code status} {@link #OK} (then {@code wts} and {@code value}) or an error code. */
    @FunctionalInterface
    public interface ReadReply {
        void answer(int status, long wts, byte[] value);
    }

    /**
     * Settings of the hot-record detector and the adaptive deferral (§4.2): a record is hot when it received
     * {@code hotThreshold} requests in the last {@code windowNs}; its deferral starts at {@code initialNs} (the low
     * value the paper grows from, "instead of setting an overlong deferral time in advance"), rises by
     * {@code stepNs} at each write refused while its write failure rate is above {@link #HIGH_RATE}, falls by a
     * quarter step at each write installed while the rate is below {@link #LOW_RATE}, never below {@code initialNs}
     * nor above {@code maxNs}.
     */
    public record Deferral(boolean enabled, long windowNs, int hotThreshold, long initialNs, long stepNs, long maxNs,
                           int maxVersions) {
        /** Write failure rate (refused / attempted installs, last window) above which a refusal raises the deferral. */
        public static final double HIGH_RATE = 0.10;
        /** Write failure rate below which an installed write cuts the deferral. */
        public static final double LOW_RATE = 0.02;
        /** The defaults: 10 ms windows (§4.2), hot at 32 requests a window, deferral from 2 us by 2 us steps. */
        public static final Deferral DEFAULT = new Deferral(true, 10_000_000L, 32, 2_000L, 2_000L, 200_000L, 16);
        public static final Deferral OFF = DEFAULT.withEnabled(false);

        public Deferral {
            if (windowNs <= 0 || hotThreshold <= 0 || hotThreshold > 0xffff || initialNs < 0 || stepNs < 4
                || maxNs < initialNs || maxVersions < 2) {
                throw new IllegalArgumentException("bad Aurogon deferral settings: " + this);
            }
        }

        public Deferral withEnabled(final boolean on) {
            return new Deferral(on, windowNs, hotThreshold, initialNs, stepNs, maxNs, maxVersions);
        }
    }

    static final class Version {
        final long wts;
        long rts;
        boolean pending;
        /** No value at this version: the key is absent (never inserted, or deleted here). */
        boolean absent;
        byte[] value;
        List<Waiter> waiters;
        /** While pending: the parts of a value too long for one COMMIT request, staged before it ({@link #stage}). */
        byte[] staging;
        java.util.BitSet staged;
        /** Pending past the orphan lease: reads meeting it are answered {@link #ORPHAN}. */
        boolean suspect;
        /** Committed by a recovery, or seen committed by one ({@link #FIRST_SEEN}). */
        boolean recovered;

        Version(final long wts, final long rts, final boolean pending, final byte[] value) {
            this.wts = wts;
            this.rts = rts;
            this.pending = pending;
            this.value = value;
        }
    }

    /** A read parked on a pending version; {@code sps}: it carried {@link #FLAG_SPS}. */
    private record Waiter(long ts, ReadReply reply, boolean sps) {
    }

    static final class Record {
        final int table;
        final long key;
        /** Sorted by wts, descending. */
        final ArrayList<Version> versions = new ArrayList<>(4);
        /** [window : 32][previous window's requests : 16][this window's : 16]. */
        long counter;
        long deferNs;
        /**
         * Install attempts and refusals in the counter's windows: [previous window's attempts : 16][its refusals :
         * 16][this window's attempts : 16][its refusals : 16], rolled with {@link #counter}.
         */
        long writes;

        Record(final int table, final long key) {
            this.table = table;
            this.key = key;
        }
    }

    private final Backing backing;
    private final Deferrer deferrer;
    private final Deferral settings;
    private final Map<Integer, Map<Long, Record>> tables = new HashMap<>();
    /**
     * The records with a committed version at a timestamp, for every committed version kept ({@link #committedAt}:
     * a recovery's question answered without scanning every record on the event loop). Versions loaded committed are
     * not indexed (a write the backing holds came by a commit indexed here, or, on a promoted copy, by an APPLY that
     * its HOLDS answers COMMITTED for); a reclaimed version leaves the index, so it holds what the records keep.
     */
    private final Map<Long, List<Record>> committedIndex = new HashMap<>();
    private long blockedReads;
    private long deferredReads;
    /** Reads served (those refused early included), and the deferral time the deferred ones waited, summed and max. */
    private long reads;
    private long deferredNs;
    private long maxDeferredNs;
    private long refusedInstalls;
    /**
     * How late the writes the install rule refused came (ns of clock reading: the rts that refused them minus their
     * timestamp), summed and max: the reordering a deferral must cover (clock error plus latency skew, §4.2).
     */
    private long refusedLateNs;
    private long maxRefusedLateNs;
    private long refusedByRts;
    /** SPS ({@link #FLAG_SPS}): reads answered {@link #SPS_STALE}, writes refused by rule 2. */
    private long spsStaleReads;
    private long spsRefusedInstalls;
    /**
     * The wts of the committed version the last {@link #SPS_IMMORTAL} answer refused a write under. Correct only
     * because every request runs to its reply on the participant's one thread, with nothing between the install or
     * insert and {@code ParticipantService#seen} reading it (review of aurogon23: an out-parameter, as insert's
     * {@code below}, would carry it without a shared field; not done, for lack of time).
     */
    private long immortalFloor;
    private long installs;
    private long reclaimed;
    /** The largest timestamp any request carried: what DST's chasing clocks are pulled forward by. */
    private long maxTs;
    /** How long a version may stay pending before it is a suspect (0: never, without backups to resolve it). */
    private long orphanNs;
    /**
     * Tables this participant serves as a promoted backup (its primary died, memory-node failover) and their read
     * floors: the largest timestamp any coordinator had issued when it was promoted. Every version present then, and
     * every record loaded later, gets an rts of at least it: the dead primary's rts are gone, and a read there may
     * have returned any version below the floor, so no write below the floor may be installed under one.
     */
    private final Map<Integer, Long> floors = new HashMap<>();
    /**
     * How many versions are pending here per timestamp ({@link #pendingAt}): a recovery's COMMITTED_AT asks whether a
     * COMMIT of a timestamp could still land here, which only a pending version at it can take. Counted where a
     * version becomes pending (an install, an adoption) and where it stops (its commit, its rollback).
     */
    private final org.agrona.collections.Long2LongHashMap pendingCount = new org.agrona.collections.Long2LongHashMap(0);

    /** Whether a version is pending here at {@code ts} (O(1)). */
    public boolean pendingAt(final long ts) {
        return pendingCount.get(ts) > 0;
    }

    private void pendingBegins(final long ts) {
        pendingCount.put(ts, pendingCount.get(ts) + 1);
    }

    private void pendingEnds(final long ts) {
        final long left = pendingCount.get(ts) - 1;
        if (left > 0) {
            pendingCount.put(ts, left);
        } else {
            pendingCount.remove(ts);
        }
    }

    /** Records with a suspect pending version, by that version's timestamp, oldest suspect first. */
    private final java.util.LinkedHashMap<Long, List<Record>> suspects = new java.util.LinkedHashMap<>();

    public Participant(final Backing backing, final Deferrer deferrer, final Deferral settings) {
        this.backing = backing;
        this.deferrer = deferrer;
        this.settings = settings;
    }

    /**
     * Turns orphan detection on: a version pending for longer than {@code leaseNs} becomes a suspect, its parked reads
     * and later reads are answered {@link #ORPHAN}, and {@link #suspect()} names it (for a live coordinator to resolve
     * through the backups; §4.5 has primaries detect a dead coordinator by heartbeats and ask its backups). Only with
     * backups: without them a suspect cannot be resolved.
     */
    public void orphans(final long leaseNs, final java.util.function.LongPredicate silent) {
        if (leaseNs < 0) {
            throw new IllegalArgumentException("orphan lease " + leaseNs + " ns must not be negative");
        }
        this.orphanNs = leaseNs;
        this.silent = silent;
    }

    /**
     * A version (or a held replication) whose coordinator still talked within the lease is looked at again after a
     * lease over this: the heartbeats' period ({@link Heartbeats#PERIOD_NS}).
     */
    static final int RECHECKS = 4;

    /** Whether the coordinator of a timestamp was not heard from for the lease (§4.5's heartbeat, by traffic). */
    private java.util.function.LongPredicate silent = ts -> true;

    // ------------------------------------------------------------------------------------------------ requests

    /** Read at {@code ts} ({@link #FLAG_PREATTACH}, {@link #FLAG_NO_DEFER}); answered now or later. */
    public void read(final int table, final long key, final long ts, final int flags, final ReadReply reply) {
        final Record r = record(table, key);
        if (r == null) {
            reply.answer(NOT_FOUND, 0, null);
            return;
        }
        count(r, ts);
        reads++;
        final boolean sps = (flags & FLAG_SPS) != 0;
        if ((flags & FLAG_PREATTACH) != 0) {
            final int installed = installRule(r, ts, sps);
            if (installed != OK) {
                // Early abort: the read does not run; a STALE answer carries the floor as its wts (tombstoneRule).
                // SPS_IMMORTAL's, the committed version above it.
                reply.answer(installed, installed == STALE ? staleFloor()
                    : installed == SPS_IMMORTAL ? immortalFloor : 0, null);
                return;
            }
        }
        if (settings.enabled() && (flags & FLAG_NO_DEFER) == 0 && hot(r, ts) && r.deferNs > 0) {
            deferredReads++;
            deferredNs += r.deferNs;
            maxDeferredNs = Math.max(maxDeferredNs, r.deferNs);
            deferrer.after(r.deferNs, () -> execute(r, ts, reply, sps));
        } else {
            execute(r, ts, reply, sps);
        }
    }

    /** Installs a pending version at {@code ts} (an independent or late write): {@link #OK} or {@link #REFUSED}. */
    public int install(final int table, final long key, final long ts) {
        return install(table, key, ts, 0);
    }

    /** As {@link #install(int, long, long)}, with SPS's rule when {@code flags} has {@link #FLAG_SPS}. */
    public int install(final int table, final long key, final long ts, final int flags) {
        final Record r = record(table, key);
        if (r == null) {
            return NOT_FOUND;
        }
        count(r, ts);
        return installRule(r, ts, (flags & FLAG_SPS) != 0);
    }

    /**
     * Installs a pending insert at {@code ts}: {@link #OK} when the version below is an absence (its wts in slot 0 of
     * {@code below}, what the insert read) and the install rule admits it; {@link #DUPLICATE} when it is a live
     * value; {@link #REFUSED} by the install rule or when the version below is another's pending write (decided
     * later: the insert tries again with a new timestamp).
     */
    public int insert(final int table, final long key, final long ts, final long[] below) {
        return insert(table, key, ts, below, 0);
    }

    /** As {@link #insert(int, long, long, long[])}, with SPS's rule when {@code flags} has {@link #FLAG_SPS}. */
    public int insert(final int table, final long key, final long ts, final long[] below, final int flags) {
        final boolean sps = (flags & FLAG_SPS) != 0;
        final Record r = record(table, key);
        if (r == null) {
            return NOT_FOUND;
        }
        count(r, ts);
        final int tomb = tombstoneRule(r, ts);
        if (tomb != OK) {
            return tomb;
        }
        for (final Version v : r.versions) {
            if (sps && v.wts > ts && !v.pending) {
                return immortal(v); // SPS rule 2: an insert below a committed version would be immortal
            }
            if (v.wts <= ts) {
                below[0] = v.wts;
                if (v.wts == ts) {
                    return v.pending ? OK : REFUSED;
                }
                if (v.pending) {
                    adapt(r, ts, true);
                    refusedInstalls++;
                    return REFUSED;
                }
                if (!v.absent) {
                    return DUPLICATE;
                }
                final int installed = installRule(r, ts, sps);
                if (installed == OK) {
                    v.rts = Math.max(v.rts, ts); // the insert read the absence: nothing may slip in below it now
                }
                return installed;
            }
        }
        return installRule(r, ts, sps); // below every kept version: refused
    }

    /**
     * Commits the pending version at {@code ts} with {@code value} ({@code null}: a delete, the key absent from
     * {@code ts} on), answering the reads parked on it.
     */
    public int commit(final int table, final long key, final long ts, final byte[] value) {
        return commit(table, key, ts, value, false);
    }

    /**
     * As {@link #commit(int, long, long, byte[])}; {@code byRecovery}: a recovery's COMMIT, which answers
     * {@link #FIRST_SEEN} instead of {@link #NOT_PENDING} the first time a recovery finds the version committed.
     */
    public int commit(final int table, final long key, final long ts, final byte[] value, final boolean byRecovery) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, ts);
        if (i < 0 || !r.versions.get(i).pending) {
            return byRecovery ? seenByRecovery(table, key, ts) : decided(table, key, ts);
        }
        final Version v = r.versions.get(i);
        v.recovered = byRecovery;
        unsuspect(r, v);
        v.value = value;
        v.absent = value == null;
        v.pending = false;
        pendingEnds(ts);
        index(r, ts);
        v.staging = null;
        v.staged = null;
        boolean newest = true;
        for (int j = 0; j < i; j++) {
            newest &= r.versions.get(j).pending;
        }
        if (newest) {
            backing.committed(table, key, ts, value);
        }
        final List<Waiter> waiters = v.waiters;
        v.waiters = null;
        if (waiters != null) {
            final long newer = committedAbove(r, i);
            for (final Waiter w : waiters) {
                if (w.sps && newer != 0) {
                    spsStaleReads++;
                    w.reply.answer(SPS_STALE, newer, null); // SPS rule 1: committed above it while it was parked
                } else {
                    w.reply.answer(v.absent ? ABSENT : OK, v.wts, value);
                }
            }
        }
        reclaim(r);
        return OK;
    }

    /**
     * Stages {@code part} at {@code offset} of the {@code total}-byte value the pending version at {@code ts} will
     * commit (a value longer than one COMMIT request comes in parts first; staging the same part again is harmless):
     * {@link #OK}; else {@link #COMMITTED_ALREADY} when the version at {@code ts} is committed, {@link #NOT_PENDING}
     * when there is none (rolled back, never installed).
     *
     * @throws IllegalArgumentException when the part is outside the value or the total differs from earlier parts'
     */
    public int stage(final int table, final long key, final long ts, final int total, final int offset,
                     final byte[] part) {
        if (total < 0 || offset < 0 || offset > total - part.length) {
            throw new IllegalArgumentException("Aurogon STAGE: part [" + offset + ", +" + part.length
                + ") is outside a value of " + total + " bytes");
        }
        final Version v = pendingAt(table, key, ts);
        if (v == null) {
            return decided(table, key, ts);
        }
        if (v.staging == null) {
            v.staging = new byte[total];
            v.staged = new java.util.BitSet(total);
        } else if (v.staging.length != total) {
            throw new IllegalArgumentException("Aurogon STAGE of " + table + "/" + key + " at ts " + ts + ": a value of "
                + total + " bytes, earlier parts said " + v.staging.length);
        }
        System.arraycopy(part, 0, v.staging, offset, part.length);
        v.staged.set(offset, offset + part.length);
        return OK;
    }

    /**
     * The {@code total}-byte value staged for the pending version at {@code ts}, its first {@code prefix} bytes all
     * staged (the COMMIT brings the rest into it), or null when no such version is pending.
     *
     * @throws IllegalArgumentException when the staged parts do not cover the prefix or their total differs
     */
    public byte[] staged(final int table, final long key, final long ts, final int total, final int prefix) {
        final Version v = pendingAt(table, key, ts);
        if (v == null) {
            return null;
        }
        if (v.staging == null || v.staging.length != total || v.staged.nextClearBit(0) < prefix) {
            throw new IllegalArgumentException("Aurogon COMMIT of " + table + "/" + key + " at ts " + ts + " of "
                + total + " bytes: its first " + prefix + " bytes were not all staged ("
                + (v.staging == null ? "none" : v.staged.nextClearBit(0) + " of " + v.staging.length) + ")");
        }
        return v.staging;
    }

    /**
     * The value of the committed version of {@code key} at exactly {@code wts} (the rest of a value read in parts),
     * or null when it is gone (reclaimed), is pending or is an absence. Raises no rts: the read that chose it did.
     */
    public byte[] committedValue(final int table, final long key, final long wts) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, wts);
        if (i < 0) {
            return null;
        }
        final Version v = r.versions.get(i);
        return v.pending || v.absent ? null : v.value;
    }

    private Version pendingAt(final int table, final long key, final long ts) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, ts);
        return i < 0 || !r.versions.get(i).pending ? null : r.versions.get(i);
    }

    /** Removes the pending version at {@code ts}, if any, and re-runs the reads parked on it. */
    public int rollback(final int table, final long key, final long ts) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, ts);
        if (i < 0) {
            // Never installed (refused, or its request not arrived yet): a tombstone refuses it if it comes later.
            tombstone(table, key, ts);
            return OK;
        }
        final Version v = r.versions.get(i);
        if (!v.pending) {
            return NOT_PENDING;
        }
        r.versions.remove(i);
        pendingEnds(ts);
        unsuspect(r, v);
        if (v.waiters != null) {
            for (final Waiter w : v.waiters) {
                execute(r, w.ts, w.reply, w.sps);
            }
        }
        return OK;
    }

    // ------------------------------------------------------------------------------------------- tombstones

    /**
     * A ROLLBACK that found no version at its timestamp leaves a tombstone (table, key, timestamp: a timestamp names
     * one attempt, so it stands for the transaction id), and an INSTALL, INSERT or pre-attaching READ of that attempt
     * arriving after it is refused. Without it, on cluster nodes a ring opened anew after a broken one could deliver
     * a delayed INSTALL after its ROLLBACK and leave a pending version nobody decides until an orphan recovery (the
     * simulator keeps each ring's order, so there the INSTALL always came first). Tombstones are dropped once
     * {@link ParticipantService#PRUNE_LAG_NS} behind the newest timestamp seen ({@link #maxTs}), swept at most once
     * a lease, and from then on an install at or below the newest dropped one is answered {@link #STALE} (its
     * attempt aborts, its coordinator's clock floored above, and runs again with a new timestamp): the watermark, so a
     * forgotten tombstone never lets its install in ({@link #tombstoneRule}).
     */
    private final java.util.TreeMap<Long, java.util.Set<Tomb>> tombstonesByTs = new java.util.TreeMap<>();
    /** Tombstones kept: the sizes of {@link #tombstonesByTs}' sets. */
    private int tombstoneCount;
    /** Installs at or below this timestamp are answered STALE: a tombstone there may have been dropped. */
    private long tombstoneWatermark;
    private long tombstonesSweptNs = Long.MIN_VALUE;

    /**
     * One tombstone's record at its timestamp (the map's key). Kept once (issue 20, aurotomb): before, each was in a
     * HashSet of (table, key, ts) for the lookup and again in a TreeMap of ts to (table, key) arrays for the sweep;
     * the TreeMap of ts to a set of these serves both, its lookup a map probe then a set probe.
     */
    private record Tomb(int table, long key) {
    }

    private void tombstone(final int table, final long key, final long ts) {
        if (ts <= tombstoneWatermark
            || !tombstonesByTs.computeIfAbsent(ts, t -> new java.util.HashSet<>(2)).add(new Tomb(table, key))) {
            return;
        }
        tombstoneCount++;
        sweepTombstones();
    }

    private boolean tombstoned(final int table, final long key, final long ts) {
        final java.util.Set<Tomb> at = tombstonesByTs.get(ts);
        return at != null && at.contains(new Tomb(table, key));
    }

    private void sweepTombstones() {
        final long newestNs = AurogonTimestamp.clockNs(tombstonesByTs.isEmpty() ? maxTs
            : Math.max(maxTs, tombstonesByTs.lastKey()));
        if (tombstonesSweptNs != Long.MIN_VALUE && newestNs - tombstonesSweptNs < ParticipantService.ORPHAN_LEASE_NS) {
            return;
        }
        tombstonesSweptNs = newestNs;
        if (newestNs - ParticipantService.PRUNE_LAG_NS + AurogonTimestamp.BIAS_NS <= 0) {
            return;
        }
        final long horizon = AurogonTimestamp.pack(newestNs - ParticipantService.PRUNE_LAG_NS, 0, 0);
        while (!tombstonesByTs.isEmpty() && tombstonesByTs.firstKey() < horizon) {
            final Map.Entry<Long, java.util.Set<Tomb>> oldest = tombstonesByTs.pollFirstEntry();
            tombstoneCount -= oldest.getValue().size();
            tombstoneWatermark = Math.max(tombstoneWatermark, oldest.getKey());
        }
    }

    /**
     * The tombstones' part of the install rule for an INSTALL, INSERT or pre-attaching READ at {@code ts}:
     * {@link #REFUSED} when a tombstone names this attempt (its ROLLBACK came first: the attempt is over);
     * {@link #STALE} when {@code ts} is at or below the watermark with no tombstone for it, since a dropped one may
     * have named it; {@link #OK} otherwise, and always when a version is at {@code ts} already (the same write
     * again: the rule of the version decides). STALE rather than REFUSED below the watermark (review of aurofix,
     * finding 1): the watermark trails the newest timestamp by only {@link ParticipantService#PRUNE_LAG_NS}, so a
     * coordinator whose clock lags more than that (a fast clock elsewhere, a promotion's floor) was refused on every
     * key for good, retrying from the same clock; a STALE answer carries {@link #staleFloor()}, its coordinator's
     * clock is floored there ({@code AurogonTxn#floored}) and the next attempt runs above it, as with the backups'
     * pruning horizon ({@code ParticipantService#pruneDeletes}).
     */
    private int tombstoneRule(final Record r, final long ts) {
        if (tombstoneCount == 0 && tombstoneWatermark == 0) {
            return OK;
        }
        sweepTombstones();
        if (tombstoned(r.table, r.key, ts)) {
            return REFUSED;
        }
        return ts <= tombstoneWatermark && indexOf(r, ts) < 0 ? STALE : OK;
    }

    /**
     * The floor a {@link #STALE} answer of this participant carries (its seen timestamp): above the tombstones'
     * watermark and everything seen here, so the floored coordinator's next attempt passes {@link #tombstoneRule}.
     */
    public long staleFloor() {
        return Math.max(maxTs, tombstoneWatermark);
    }

    /** Tombstones kept (tests, reports). */
    public int tombstones() {
        return tombstoneCount;
    }

    /** The tombstones' watermark: installs at or below it are answered STALE ({@link #tombstoneRule}). */
    public long tombstoneWatermark() {
        return tombstoneWatermark;
    }

    /**
     * This node's copy {@code table} is promoted to primary (its primary died): records loaded from now on, and those
     * loaded already, read-floored at {@code floorTs} ({@link #floors}).
     */
    public void promote(final int table, final long floorTs) {
        floors.merge(table, floorTs, Math::max);
        maxTs = Math.max(maxTs, floorTs);
        final Map<Long, Record> t = tables.get(table);
        if (t != null) {
            for (final Record r : t.values()) {
                for (final Version v : r.versions) {
                    v.rts = Math.max(v.rts, floorTs);
                }
            }
        }
    }

    /** Whether {@code table} is served here as a promoted backup ({@link #promote}). */
    public boolean promoted(final int table) {
        return floors.containsKey(table);
    }

    /**
     * A write the dead primary had installed (its coordinator replicated it here in full before any COMMIT): pending
     * here too from promotion on, without the install rule (the primary admitted it), read-floored like every version
     * present then; the coordinator's APPLY commits it ({@link #commit}), its DISCARD rolls it back. Reads meeting it
     * park, as at the primary. A no-op when a version is at {@code ts} already.
     */
    public void adopt(final int table, final long key, final long ts) {
        final Record r = record(table, key);
        if (r == null) {
            throw new IllegalStateException("Aurogon adopting " + table + "/" + key + ": no such table here");
        }
        final Long floor = floors.get(table);
        final List<Version> vs = r.versions;
        int i = 0;
        while (i < vs.size() && vs.get(i).wts > ts) {
            i++;
        }
        if (i < vs.size() && vs.get(i).wts == ts) {
            return;
        }
        final Version adopted = new Version(ts, Math.max(ts, floor == null ? 0 : floor), true, null);
        vs.add(i, adopted);
        pendingBegins(ts);
        maxTs = Math.max(maxTs, ts);
        if (orphanNs > 0) {
            // Its coordinator may be dead too (a memory node and a coordinator crashing together): a suspect after
            // the lease like any pending version, else its readers stayed parked for ever.
            watch(r, adopted, orphanNs);
        }
    }

    // ------------------------------------------------------------------------------------------------- rules

    private void execute(final Record r, final long ts, final ReadReply reply, final boolean sps) {
        final List<Version> vs = r.versions;
        for (int i = 0; i < vs.size(); i++) {
            final Version v = vs.get(i);
            if (v.wts < ts) {
                final long newer = sps ? committedAbove(r, i) : 0;
                if (newer != 0) {
                    spsStaleReads++;
                    reply.answer(SPS_STALE, newer, null); // SPS rule 1: nothing read, no rts raised
                    return;
                }
                v.rts = Math.max(v.rts, ts);
                if (v.pending && v.suspect) {
                    reply.answer(ORPHAN, v.wts, null);
                } else if (v.pending) {
                    blockedReads++;
                    if (v.waiters == null) {
                        v.waiters = new ArrayList<>(2);
                    }
                    v.waiters.add(new Waiter(ts, reply, sps));
                } else if (v.absent) {
                    reply.answer(ABSENT, v.wts, null);
                } else {
                    reply.answer(OK, v.wts, v.value);
                }
                return;
            }
        }
        reply.answer(TOO_OLD, 0, null);
    }

    /**
     * The newest COMMITTED version's wts among the record's versions newer than index {@code i} (newest first), or 0
     * when every one of them is pending (SPS rule 1).
     */
    private static long committedAbove(final Record r, final int i) {
        for (int j = 0; j < i; j++) {
            final Version v = r.versions.get(j);
            if (!v.pending) {
                return v.wts;
            }
        }
        return 0;
    }

    /** SPS rule 2 refused a write below the committed {@code above} (the newest one, versions being newest first). */
    private int immortal(final Version above) {
        spsRefusedInstalls++;
        immortalFloor = above.wts;
        return SPS_IMMORTAL;
    }

    private int installRule(final Record r, final long ts, final boolean sps) {
        final int tomb = tombstoneRule(r, ts);
        if (tomb != OK) {
            return tomb; // its ROLLBACK came first, or may have: not counted as the install rule's refusal
        }
        final List<Version> vs = r.versions;
        for (int i = 0; i < vs.size(); i++) {
            final Version v = vs.get(i);
            if (sps && v.wts > ts && !v.pending) {
                // SPS rule 2: a write below a committed version would be immortal (no reader after it would see it).
                // Not the install rule's refusal: the deferral's write failure rate does not count it.
                return immortal(v);
            }
            if (v.wts <= ts) {
                if (v.wts == ts) {
                    return v.pending ? OK : REFUSED; // the same write again; a committed one cannot recur
                }
                final boolean refused = ts < v.rts;
                adapt(r, ts, refused);
                if (refused) {
                    refusedInstalls++;
                    final long late = AurogonTimestamp.clockNs(v.rts) - AurogonTimestamp.clockNs(ts);
                    refusedLateNs += late;
                    refusedByRts++;
                    maxRefusedLateNs = Math.max(maxRefusedLateNs, late);
                    return REFUSED;
                }
                installs++;
                final Version installed = new Version(ts, ts, true, null);
                vs.add(i, installed);
                pendingBegins(ts);
                if (orphanNs > 0) {
                    watch(r, installed, orphanNs);
                }
                return OK;
            }
        }
        adapt(r, ts, true);
        refusedInstalls++;
        return REFUSED; // below every kept version: the rts that would decide is reclaimed
    }

    /**
     * Whether a version of the record is pending here (installed, undecided: its coordinator's commit under way, in
     * doubt, or its coordinator dead and no recovery yet): a rejoining copy's re-replication waits until none is
     * ({@link AurogonRpc#PENDING}), since the object holds only the newest committed version.
     */
    public boolean pending(final int table, final long key) {
        final Record r = known(table, key);
        if (r != null) {
            for (final Version v : r.versions) {
                if (v.pending) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether a committed version at {@code ts} of the record is kept here. */
    public boolean committedAt(final int table, final long key, final long ts) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, ts);
        return i >= 0 && !r.versions.get(i).pending;
    }

    /**
     * A coordinator's COMMIT or STAGE found no version pending at {@code ts}: {@link #COMMITTED_ALREADY} when one is
     * committed there (its own attempt's, committed by a recovery or an earlier COMMIT), else {@link #NOT_PENDING}.
     */
    public int decided(final int table, final long key, final long ts) {
        return committedAt(table, key, ts) ? COMMITTED_ALREADY : NOT_PENDING;
    }

    /** A recovery found the committed version at {@code ts}: {@link #FIRST_SEEN} the first time, else not pending. */
    public int seenByRecovery(final int table, final long key, final long ts) {
        final Record r = known(table, key);
        final int i = r == null ? -1 : indexOf(r, ts);
        if (i < 0 || r.versions.get(i).pending || r.versions.get(i).recovered) {
            return NOT_PENDING;
        }
        r.versions.get(i).recovered = true;
        return FIRST_SEEN;
    }

    /** Orphan checks armed and not yet run ({@link #watching}). */
    private int watching;

    /** Looks at {@code v} after {@code ns}: a suspect then if it is still pending and its coordinator silent. */
    private void watch(final Record r, final Version v, final long ns) {
        watching++;
        deferrer.after(ns, () -> {
            watching--;
            suspect(r, v);
        });
    }

    /**
     * Whether a pending version here may yet become a suspect, or is one: an orphan check is armed or a suspect
     * waits for its resolution. A heartbeat's answer says so, and idle coordinators beat on until it is false
     * ({@link Heartbeats}): else a dead coordinator's state on a node nobody talks to any more stayed undecided.
     */
    public boolean watching() {
        return watching > 0 || !suspects.isEmpty();
    }

    /** {@code v} is still pending after the orphan lease: a suspect; the reads parked on it are told so. */
    private void suspect(final Record r, final Version v) {
        if (!v.pending || v.suspect || indexOf(r, v.wts) < 0 || r.versions.get(indexOf(r, v.wts)) != v) {
            return;
        }
        if (!silent.test(v.wts)) {
            // Its coordinator still talked to this node within the lease: look again a quarter lease later (a whole
            // lease let a coordinator dying just after the first look park this version's readers for up to two
            // leases, past the 1 ms call bound: seen with a memory node and a coordinator crashing together).
            watch(r, v, orphanNs / RECHECKS);
            return;
        }
        v.suspect = true;
        suspects.computeIfAbsent(v.wts, t -> new ArrayList<>(2)).add(r);
        final List<Waiter> waiters = v.waiters;
        v.waiters = null;
        if (waiters != null) {
            for (final Waiter w : waiters) {
                w.reply.answer(ORPHAN, v.wts, null);
            }
        }
    }

    private void unsuspect(final Record r, final Version v) {
        if (v.suspect) {
            v.suspect = false;
            final List<Record> rs = suspects.get(v.wts);
            if (rs != null && rs.remove(r) && rs.isEmpty()) {
                suspects.remove(v.wts);
            }
        }
    }

    /** The timestamp of a suspect pending version (the oldest), or 0. */
    public long suspect() {
        return suspects.isEmpty() ? 0 : suspects.keySet().iterator().next();
    }

    /** The records ({@code [table, key]}) with a suspect version pending at {@code ts}. */
    public List<long[]> suspectsAt(final long ts) {
        return keysOf(suspects.get(ts));
    }

    /**
     * The records ({@code [table, key]}) with a committed version at {@code ts} here (a recovery's question when the
     * transaction lost a backup share, rare; {@link CoordinatorRecovery}): from the index, no scan.
     */
    public List<long[]> committedAt(final long ts) {
        return keysOf(committedIndex.get(ts));
    }

    /** {@code records} as {@code [table, key]} pairs (none for null). */
    private static List<long[]> keysOf(final List<Record> records) {
        final List<long[]> out = new ArrayList<>();
        if (records != null) {
            for (final Record r : records) {
                out.add(new long[] {r.table, r.key});
            }
        }
        return out;
    }

    private void index(final Record r, final long ts) {
        committedIndex.computeIfAbsent(ts, t -> new ArrayList<>(2)).add(r);
    }

    private void unindex(final Record r, final long ts) {
        final List<Record> rs = committedIndex.get(ts);
        if (rs != null && rs.remove(r) && rs.isEmpty()) {
            committedIndex.remove(ts);
        }
    }

    /**
     * Up to {@code max} pending versions here, each as "T key K wts W (server S loop L) rts R, N waiting": which
     * record a run left undecided (the simulator's report of a run not quiescent after its drain).
     */
    public List<String> pendingDescribed(final int max, final java.util.function.IntFunction<String> tableName) {
        final List<String> out = new ArrayList<>();
        for (final Map<Long, Record> t : tables.values()) {
            for (final Record r : t.values()) {
                for (final Version v : r.versions) {
                    if (v.pending && out.size() < max) {
                        out.add(tableName.apply(r.table) + " key " + r.key + " wts " + v.wts + " (server "
                            + AurogonTimestamp.server(v.wts) + " loop " + AurogonTimestamp.loop(v.wts) + ") rts " + v.rts
                            + ", " + (v.waiters == null ? 0 : v.waiters.size()) + " waiting");
                    }
                }
            }
        }
        return out;
    }

    /** Timestamps of every version pending here (tests, end-of-run checks). */
    public List<Long> pendingTimestamps() {
        final List<Long> out = new ArrayList<>();
        for (final Map<Long, Record> t : tables.values()) {
            for (final Record r : t.values()) {
                for (final Version v : r.versions) {
                    if (v.pending) {
                        out.add(v.wts);
                    }
                }
            }
        }
        return out;
    }

    /** Reclaims committed versions beyond {@code maxVersions}, oldest first, never the newest committed one. */
    private void reclaim(final Record r) {
        final List<Version> vs = r.versions;
        int newestCommitted = -1;
        for (int i = 0; i < vs.size() && newestCommitted < 0; i++) {
            if (!vs.get(i).pending) {
                newestCommitted = i;
            }
        }
        for (int i = vs.size() - 1; vs.size() > settings.maxVersions() && i > newestCommitted; i--) {
            if (!vs.get(i).pending) {
                unindex(r, vs.remove(i).wts);
                reclaimed++;
            }
        }
    }

    // -------------------------------------------------------------------------------- hot records, deferral

    private void count(final Record r, final long ts) {
        maxTs = Math.max(maxTs, ts);
        final long window = Math.max(0, AurogonTimestamp.clockNs(ts)) / settings.windowNs() & 0xffff_ffffL;
        final long c = r.counter;
        final long at = c >>> 32;
        if (at == window) {
            final long current = Math.min(0xffff, (c & 0xffff) + 1);
            r.counter = c & ~0xffffL | current;
        } else if (window > at) {
            final boolean next = window == at + 1;
            r.counter = window << 32 | (next ? c & 0xffff : 0) << 16 | 1;
            r.writes = next ? r.writes << 32 : 0;
        } // a request of an older window (a straggler): not counted
    }

    /**
     * The requests of a pair of window counts ([previous window's : 16][window {@code at}'s : 16]) in the last window
     * before {@code ts}: the paper counts "the requests in the last 10 milliseconds"; two 16-bit window counts
     * estimate that as the current window's count plus the previous one's scaled by the share of it the last 10 ms
     * still cover. A straggler of an older window sees window {@code at}'s count alone.
     */
    private long lastWindow(final long counts, final long at, final long ts) {
        final long now = Math.max(0, AurogonTimestamp.clockNs(ts));
        final long window = now / settings.windowNs() & 0xffff_ffffL;
        final long current = counts & 0xffff;
        final long previous = (counts >>> 16) & 0xffff;
        final long share = (settings.windowNs() - now % settings.windowNs()) * 65536 / settings.windowNs();
        if (window <= at) {
            return window < at ? current : current + (previous * share >> 16);
        }
        return window == at + 1 ? current * share >> 16 : 0; // no request counted yet in ts's window
    }

    private boolean hot(final Record r, final long ts) {
        return lastWindow(r.counter, r.counter >>> 32, ts) >= settings.hotThreshold();
    }

    /**
     * Per-record adaptation (§4.2), at each install on a hot record: count it in the record's write windows; a
     * refusal while the write failure rate of the last window is above {@link Deferral#HIGH_RATE} raises the deferral
     * by a step (to let one more straggler in, "tolerate late arrivals of more writes"); an installed write while the
     * rate is below {@link Deferral#LOW_RATE} cuts it by a quarter step ("cut conservatively"), down to the initial
     * value; in between it holds. A cold record's reads are not deferred, and its deferral does not move.
     */
    private void adapt(final Record r, final long ts, final boolean failed) {
        final long w = r.writes;
        final long attempts = Math.min(0xffff, (w >>> 16 & 0xffff) + 1);
        final long refusals = Math.min(0xffff, (w & 0xffff) + (failed ? 1 : 0));
        r.writes = w & ~0xffff_ffffL | attempts << 16 | refusals;
        if (!settings.enabled() || !hot(r, ts)) {
            return;
        }
        final double rate = rate(r, ts);
        if (failed && rate > Deferral.HIGH_RATE) {
            r.deferNs = Math.min(settings.maxNs(), r.deferNs + settings.stepNs());
        } else if (!failed && rate < Deferral.LOW_RATE) {
            r.deferNs = Math.max(settings.initialNs(), r.deferNs - settings.stepNs() / 4);
        }
    }

    /** Refused over attempted installs in the last window before {@code ts} ({@link #lastWindow}). */
    private double rate(final Record r, final long ts) {
        final long w = r.writes;
        final long at = r.counter >>> 32;
        final long attempts = lastWindow(w >>> 16 & 0xffff | (w >>> 48) << 16, at, ts);
        final long refusals = lastWindow(w & 0xffff | (w >>> 32 & 0xffff) << 16, at, ts);
        return attempts == 0 ? 0 : (double) refusals / attempts;
    }

    // ------------------------------------------------------------------------------------------------ records

    private Record known(final int table, final long key) {
        final Map<Long, Record> t = tables.get(table);
        return t == null ? null : t.get(key);
    }

    private Record record(final int table, final long key) {
        final Map<Long, Record> t = tables.computeIfAbsent(table, id -> new HashMap<>());
        Record r = t.get(key);
        if (r == null) {
            final long[] version = new long[1];
            final byte[] value = backing.load(table, key, version);
            if (value == null && !backing.hasTable(table)) {
                return null;
            }
            r = new Record(table, key);
            r.deferNs = settings.initialNs();
            final Long floor = floors.get(table); // a promoted copy: reads up to the floor may have seen this version
            final Version first = new Version(version[0], floor == null ? version[0] : Math.max(version[0], floor),
                false, value);
            first.absent = value == null;
            r.versions.add(first);
            t.put(key, r);
        }
        return r;
    }

    private static int indexOf(final Record r, final long ts) {
        final List<Version> vs = r.versions;
        for (int i = 0; i < vs.size(); i++) {
            final long wts = vs.get(i).wts;
            if (wts == ts) {
                return i;
            }
            if (wts < ts) {
                return -1;
            }
        }
        return -1;
    }

    // ----------------------------------------------------------------------------------------- inspection

    /**
     * Checks the invariants of every record: versions strictly descending by wts, {@code rts >= wts}; returns the
     * first violation, or null.
     */
    public String violation() {
        for (final Map<Long, Record> t : tables.values()) {
            for (final Record r : t.values()) {
                long previous = Long.MAX_VALUE;
                for (final Version v : r.versions) {
                    if (v.wts >= previous) {
                        return "versions of " + r.table + "/" + r.key + " not strictly descending at wts " + v.wts;
                    }
                    if (v.rts < v.wts) {
                        return "rts " + v.rts + " below wts " + v.wts + " on " + r.table + "/" + r.key;
                    }
                    if (!v.pending && (v.value == null) != v.absent) {
                        return "committed version " + v.wts + " of " + r.table + "/" + r.key + " is "
                            + (v.absent ? "absent with" : "present without") + " a value";
                    }
                    previous = v.wts;
                }
            }
        }
        return null;
    }

    /** The versions of a record as {@code [wts, rts, pending ? 1 : 0]} rows, newest first (tests); null if unknown. */
    public long[][] versions(final int table, final long key) {
        final Record r = known(table, key);
        if (r == null) {
            return null;
        }
        final long[][] rows = new long[r.versions.size()][];
        for (int i = 0; i < rows.length; i++) {
            final Version v = r.versions.get(i);
            rows[i] = new long[] {v.wts, v.rts, v.pending ? 1 : 0};
        }
        return rows;
    }

    /** The record's current deferral time (ns), or -1 when unknown. */
    public long deferNs(final int table, final long key) {
        final Record r = known(table, key);
        return r == null ? -1 : r.deferNs;
    }

    public boolean hot(final int table, final long key) {
        final Record r = known(table, key);
        return r != null && hot(r, maxTs);
    }

    public long blockedReads() {
        return blockedReads;
    }

    public long deferredReads() {
        return deferredReads;
    }

    public long reads() {
        return reads;
    }

    /** The deferral times the deferred reads waited, summed (ns). */
    public long deferredNs() {
        return deferredNs;
    }

    public long maxDeferredNs() {
        return maxDeferredNs;
    }

    public long refusedInstalls() {
        return refusedInstalls;
    }

    /** {@link #refusedLateNs}: summed over the writes the install rule refused against a version's rts. */
    public long refusedLateNs() {
        return refusedLateNs;
    }

    /** Writes the install rule refused against a version's rts (what {@link #refusedLateNs} sums over). */
    public long refusedByRts() {
        return refusedByRts;
    }

    /**
     * The floor of the last {@link #SPS_IMMORTAL} answer (the committed version's wts above the refused write), read
     * by the caller right after that answer, on the participant's own thread as every request.
     */
    public long immortalFloor() {
        return immortalFloor;
    }

    /** SPS's refusals here: {@code [reads answered SPS_STALE (rule 1), writes refused (rule 2)]}. */
    public long[] spsRefusals() {
        return new long[] {spsStaleReads, spsRefusedInstalls};
    }

    public long maxRefusedLateNs() {
        return maxRefusedLateNs;
    }

    public long installs() {
        return installs;
    }

    /** The largest timestamp any request to this participant carried (returned with every answer, for DST). */
    public long maxTs() {
        return maxTs;
    }

    public long reclaimed() {
        return reclaimed;
    }
}
