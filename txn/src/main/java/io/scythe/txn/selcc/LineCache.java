package io.scythe.txn.selcc;

import io.scythe.bridge.Doorbell;
import io.scythe.bridge.RdmaChannel;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.NotServingException;
import io.scythe.txn.PeerLoops;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Reposts;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Supplier;

/**
 * One participant's (event loop's) cache of lines (SELCC §3.1, §4): frames in LRU order, each with the ownership memo
 * (M/S/I, mirrored by the latch word: memo M iff the word's X field is this participant, memo S iff its bit is set)
 * and a local shared-exclusive latch (counts: loop-confined, no atomics). Global latches are released lazily: only
 * when another participant's invalidation asks ({@link #handle}), when the frame is evicted (LRU beyond
 * {@link SelccModule#DEFAULT_CACHE_FRAMES}, in batches sized to the cache, grouped per memory node, not waited for:
 * {@link #evictLru}), or when it stayed idle for the lease
 * ({@link SelccModule#DEFAULT_LEASE_NS}; this also flushes every copy back once a run stops).
 *
 * <p>Lines are table objects (package doc): a frame's copy is the object slot; its latch word bytes in the copy mean
 * nothing and are never written back. A flush WRITEs the version word, the value length and the dirty range of the
 * value, never the latch word, then the FAA that releases or hands over, on the same QP.
 *
 * <p>Fairness: the γ lease ({@link SelccTxn}'s local takes of a wanted frame), remembered invalidations served
 * highest priority first at the local release ({@link #localReleased}), the reader spin flag ({@link ReaderSpin}),
 * priority matching (opt-in, {@link SelccModule#priorityMatching}). A dropped invalidation aborts a requester that
 * holds other lines (2PL no-wait); one that holds nothing resends after {@code C·RTT/N_r} for
 * {@link SelccModule#rounds} rounds. Every line this loop failed to latch is paced: no atomic on its word for
 * {@code C·RTT/N_r} after the N_r-th failure in a row, RTT that word's last measured atomic (a hot word's atomics
 * queue at the memory node's NIC). Two readers upgrading at once: the lower participant wins, the other yields.
 *
 * <p>Forwarding (§4.4.1): each loop registers receive slots ({@link SelccModule#receiveSlots}) when its node starts
 * serving; an invalidation that may be answered with a copy names a free one (address, rkey, ticket) and the holder
 * WRITEs the line there ({@link #forwardTo}); {@link #fromSlot} takes it. Not implemented (issue 21): the copy landing
 * in the frame itself (frames are not registered), the per-QP eviction rings (and their bound on a QP's outstanding
 * evictions).
 */
public final class LineCache {
    static final TxnRuntime.Key<LineCache> KEY = new TxnRuntime.Key<>("selcc-line-cache");
    /**
     * Rounds an acquisition may take, as a multiple of {@link SelccModule#rounds} ({@code scythe.selcc.chaseRounds},
     * default {@link SelccModule#DEFAULT_CHASE_ROUNDS}) (which bounds the rounds answered
     * "dropped"): a round answered "not held" or "released" found its holder gone already (the line moves on among
     * other participants), which is no conflict to give up on, so it reads the latch word again at once; this bounds
     * the chase (at θ = 10 write-only with 2 rounds in all, 389 of 484 failed acquisitions gave up chasing).
     */
    private final int chaseRounds = SelccModule.chaseRounds();
    /** Upgrade CASes (each after invalidating the other readers) before the fallback (release S, acquire X). */
    static final int UPGRADE_TRIES = 2;

    /**
     * The caches of each node's loops, for the invalidation handler on that loop. Values are weak too (as Aurogon's
     * ParticipantService registry, 45f5050): a cache holds its runtime, whose peer loops hold the {@link CnPeers} key,
     * so a strong value would keep every simulated node's peers, caches and frames alive for the life of the JVM.
     */
    private static final Map<CnPeers, Caches> REGISTRY = Collections.synchronizedMap(new WeakHashMap<>());

    /** One node's loops' caches, held weakly (each is its runtime's extension, alive as long as its loop). */
    private static final class Caches {
        private final java.lang.ref.WeakReference<?>[] byLoop;
        /** Each loop's registered receive slots (forwarding by one-sided WRITE), or null: none registered. */
        private final io.scythe.fabric.MemoryRegion[] slots;

        Caches(final int loops) {
            byLoop = new java.lang.ref.WeakReference<?>[loops];
            slots = new io.scythe.fabric.MemoryRegion[loops];
        }

        io.scythe.fabric.MemoryRegion slots(final int loop) {
            return loop < 0 || loop >= slots.length ? null : slots[loop];
        }

        LineCache get(final int loop) {
            return loop < 0 || loop >= byLoop.length || byLoop[loop] == null ? null : (LineCache) byLoop[loop].get();
        }

        void put(final int loop, final LineCache cache) {
            byLoop[loop] = new java.lang.ref.WeakReference<>(cache);
        }
    }

    enum Memo { I, S, M }

    /**
     * Counts over every cache of the JVM (hits, global acquisitions, invalidations and their answers, evictions), for
     * reports: printed at exit with {@code -Dscythe.selcc.stats=true}. Plain sums of loop-confined increments.
     */
    static final class Stats {
        static final java.util.concurrent.atomic.LongAdder HITS = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder ACQUIRES = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder UPGRADES = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder SENT = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder DROPPED = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder GRANTED = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder EVICTED = new java.util.concurrent.atomic.LongAdder();
        static final java.util.concurrent.atomic.LongAdder YIELDED = new java.util.concurrent.atomic.LongAdder();
        /** The most victims one LRU eviction took (never more than its cap: tests). */
        static final java.util.concurrent.atomic.LongAccumulator LARGEST_BATCH =
            new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);

        static {
            if (Boolean.getBoolean("scythe.selcc.stats")) {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println(summary())));
            }
        }

        /** Counts by cause (abort causes, invalidations by kind and answer, readers per case 3): {@link #count}. */
        static final Map<String, java.util.concurrent.atomic.LongAdder> CAUSES =
            new java.util.concurrent.ConcurrentHashMap<>();

        /** Whether causes and times are counted: {@code -Dscythe.selcc.stats=true}, or {@link #countCauses}. */
        static volatile boolean enabled = Boolean.getBoolean("scythe.selcc.stats");
        /** Virtual ns summed by kind, beside {@link #CAUSES}' count of the same kind. */
        static final Map<String, java.util.concurrent.atomic.LongAdder> NANOS =
            new java.util.concurrent.ConcurrentHashMap<>();

        /** Commits per participant (fairness: min, max and Jain's index over participants in the report). */
        static final Map<Integer, java.util.concurrent.atomic.LongAdder> COMMITS =
            new java.util.concurrent.ConcurrentHashMap<>();

        static void committed(final int participant) {
            if (enabled) {
                COMMITS.computeIfAbsent(participant, p -> new java.util.concurrent.atomic.LongAdder()).increment();
            }
        }

        /** "min .. max, Jain j" of the commits per participant that committed anything (or "none"). */
        static String fairness() {
            long min = Long.MAX_VALUE;
            long max = 0;
            double sum = 0;
            double squares = 0;
            for (final java.util.concurrent.atomic.LongAdder n : COMMITS.values()) {
                final long c = n.sum();
                min = Math.min(min, c);
                max = Math.max(max, c);
                sum += c;
                squares += (double) c * c;
            }
            return COMMITS.isEmpty() ? "none" : COMMITS.size() + " participants, min " + min + " max " + max
                + String.format(" Jain %.3f", sum * sum / (COMMITS.size() * squares));
        }

        static void time(final String kind, final long ns) {
            count(kind);
            NANOS.computeIfAbsent(kind, c -> new java.util.concurrent.atomic.LongAdder()).add(ns);
        }

        static void count(final String cause) {
            if (!enabled) {
                return;
            }
            CAUSES.computeIfAbsent(cause, c -> new java.util.concurrent.atomic.LongAdder()).increment();
        }

        static String summary() {
            final long hits = HITS.sum();
            final long acquires = ACQUIRES.sum();
            return "selcc cache: hits " + hits + " global acquires " + acquires + " (hit ratio "
                + String.format("%.3f", hits / (double) Math.max(1, hits + acquires)) + ") upgrades "
                + UPGRADES.sum() + " invalidations sent " + SENT.sum() + " dropped " + DROPPED.sum() + " granted "
                + GRANTED.sum() + " evicted " + EVICTED.sum() + " yielded (lease) " + YIELDED.sum() + "\n  by cause: "
                + new java.util.TreeMap<>(CAUSES) + "\n  mean us: " + means() + "\n  commits per participant: "
                + fairness();
        }

        private static String means() {
            final StringBuilder b = new StringBuilder();
            new java.util.TreeMap<>(NANOS).forEach((k, ns) -> b.append(k).append('=').append(String.format("%.1f",
                ns.sum() / 1000.0 / Math.max(1, CAUSES.get(k).sum()))).append(' '));
            return b.toString();
        }

        private Stats() {
        }
    }

    /** A line: memory node and object address. */
    record Line(String node, long address) {
    }

    /** One cached line. */
    static final class Frame {
        final Line line;
        final int rkey;
        final int lineBytes;
        final UnsafeBuffer image;
        Memo memo = Memo.I;
        /** Local Shared holders. */
        int readers;
        /** A local flow holds it Exclusive. */
        boolean writer;
        /** A global verb or invalidation of it is in flight: handlers drop, local flows wait for {@link #pending}. */
        boolean busy;
        /**
         * The global step it is busy with is an acquisition (or upgrade) by a local flow, which may take rounds: a
         * flow of another transaction that holds other lines does not wait for it (no wait while holding).
         */
        boolean acquiring;
        /** Whether the step it is busy with may wait for a dropped invalidation (its transaction holds nothing else). */
        boolean mayWait;
        /** What it is busy with (completes when it is not busy any more), or null. */
        Future<?> pending;
        /** Dirty range of the value ({@link DirtyBounds}, data offsets), and whether header words changed. */
        long dirty = DirtyBounds.CLEAN;
        boolean headerDirty;
        long lastUsedNs;
        /** Fairness (§5.3.1): an invalidation was dropped because a local transaction held it. */
        boolean wanted;
        /** Local acquisitions since it was {@link #wanted}; at γ the loop stops taking it and lets it go. */
        int sinceWanted;
        /** The round of the acquisition in flight (N_r): its invalidations' priority is N_r + 1 (§5.3.2). */
        int round;
        /** Rounds of the acquisition in flight answered "dropped" (bounded by {@link SelccModule#rounds}). */
        int drops;
        /**
         * The readers the acquisition in flight last invalidated (case 3, or an upgrade's), 0 when its last round
         * asked none: a reader bit outside them on its next CAS is a new sharer that joined meanwhile
         * ({@link #NEW_SHARER_IN_CASE_3}).
         */
        long askedReaders;
        /**
         * Priority matching (§5.3.2): the priority this participant's Exclusive was taken at after it starved (retried:
         * at least {@link SelccModule#SPIN_MIN_PRIORITY}), else 0; while it holds the line Modified a global reader's
         * PeerRd of lower priority is dropped, so starved writers and readers take turns. Cleared when M is left.
         */
        int writerPriority;
        /** The step it is busy with is an upgrade (S -> M) of this participant. */
        boolean upgrading;
        /** The step it is busy with serves an invalidation (a handover or a release, {@link #serve}). */
        boolean serving;
        /**
         * A lower participant's invalidation reached this frame mid-upgrade (the symmetric upgrade race): this upgrade
         * yields, dropping its Shared before it posts another CAS, and takes the line by the fallback. 0: none.
         */
        int yieldTo;
        /** Rounds of the upgrade in flight that waited for a yielding reader (bounded by {@link #UPGRADE_TRIES}). */
        int yieldWaits;
        /** Failed acquisitions of the line by this loop before the one in flight (priority aging, §5.3.2). */
        int aged;
        /** Virtual time of the last atomic (with its READ) on the latch word: the RTT of §5.1.2's interval. */
        long atomicRttNs;
        /** The acquisition in flight gave up because its holders moved on (answered "not held"), not a conflict. */
        boolean movedOn;
        /** Invalidations remembered while local transactions held it (§5.3.2), or null. */
        List<Waiting> waiting;

        Frame(final Line line, final int rkey, final int lineBytes) {
            this.line = line;
            this.rkey = rkey;
            this.lineBytes = lineBytes;
            this.image = new UnsafeBuffer(new byte[lineBytes]);
        }

        long latchAddress() {
            return line.address + ObjectLayout.PROTOCOL_WORD_OFFSET;
        }

        boolean idle() {
            return !busy && readers == 0 && !writer;
        }

        @Override
        public String toString() {
            return line.node + "@" + line.address + " " + memo + " r" + readers + (writer ? " w" : "")
                + (busy ? " busy" : "");
        }
    }

    private final TxnRuntime runtime;
    private final PeerLoops peers;
    private final int me;
    private final int capacity;
    /** Victims one LRU eviction takes at most ({@link #evictionCap}): the free-list threshold L of §5.2.1. */
    private final int evictCap;
    private final long leaseNs;
    private final int rounds = SelccModule.rounds();
    private final int gamma = SelccModule.gamma();
    private final long resendNs = SelccModule.resendNs();
    private final long deferNs = SelccModule.deferNs();
    private final int deferPriorityCap = SelccModule.deferPriorityCap();
    private final boolean priorityMatching = SelccModule.priorityMatching();
    /** The Fig. 18 ablation's switches ({@link SelccModule#feature}). */
    /**
     * Fig. 7a's baseline ({@code scythe.selcc.handover=false}, which also turns {@link #forwarding} off): an X holder
     * asked by PeerRd or PeerWr flushes its dirty range and releases its Exclusive by FAA, answers "released", and the
     * requester retries its CAS (or FAA) with the READ of the line: no ownership handover, no copy.
     */
    private final boolean handover = SelccModule.feature("handover");
    private final boolean forwarding = handover && SelccModule.feature("forwarding");
    private final boolean batchedEviction = SelccModule.feature("batchedEviction");
    private final boolean dirtyBounds = SelccModule.feature("dirtyBounds");
    /**
     * Issue 21 (selread, selcc23): the readers' side of a hot line ({@code scythe.selcc.readerGrants}; its default is
     * the property's below). A case-2 holder grants every PeerRd it remembered in its one downgrade FAA
     * ({@link LatchWord#downgradeAll}; the paper, §5.3.2, hands ownership to the one highest-priority sender: Shared
     * being no exclusive ownership, every remembered reader at or above the remembered writers' top priority gets it in
     * the same atomic, our departure), and a PeerRd that reaches a holder busy serving another invalidation (a
     * handover or a release) waits for that step to land and is then answered from the state it leaves ("not held":
     * the line is Shared, the reader's next FAA takes it; or it has another holder, the reader asks that one) instead
     * of being dropped. That
     * second rule departs from §5.1.2, whose three drop conditions drop it and let the reader resend after
     * C·RTT/N_r: the wait is for a verb in flight, never a lock, and the answer is what the resend would have found.
     * OFF by default: with it, two writers' longest XLock wait goes past SelccHotLineFairnessSimTest's writer bound
     * (945-1,523 us; 604-663 us without) while the readers' falls (288-578 us; 804-1,063 us without). selcc24: with
     * the PeerWrShared wait and the priority yield below the writers keep it (301-359 us) but two writers starve the
     * readers again (1,400-1,517 us). TODO(selread), package doc.
     */
    private final boolean readerGrants = Boolean.parseBoolean(System.getProperty("scythe.selcc.readerGrants", "false"));
    private final ReaderSpin readerSpin = new ReaderSpin(SelccModule.spinNs(), SelccModule.SPIN_MIN_PRIORITY,
        Math.max(SelccModule.SPIN_MIN_PRIORITY, deferPriorityCap));
    private final LinkedHashMap<Line, Frame> frames = new LinkedHashMap<>(1024, 0.75f, true);
    /** Lines whose eviction (flush and release) is in flight: not cached again until it landed. */
    private final Map<Line, Future<Void>> evicting = new HashMap<>();
    /**
     * Batched eviction off (the ablation): lines whose miss waits for the release of the victim that makes room for
     * it (the eviction round trip on the critical path), until that landed.
     */
    private final Map<Line, Future<Void>> makingRoom = new HashMap<>();
    /** Lines this loop failed to latch lately: when it may post their next atomic, and after how many failures. */
    private final Map<Line, Pace> paces = new HashMap<>();
    private boolean sweeping;
    /** This loop's registered receive slots (§4.4.1), or null; each {@link #slotBytes}, free ones in {@link #freeSlots}. */
    private final io.scythe.fabric.MemoryRegion slots;
    private final int slotBytes;
    private final java.util.ArrayDeque<Integer> freeSlots = new java.util.ArrayDeque<>();
    /** The last ticket an invalidation named with its slot (what the holder's WRITE carries back). */
    private long tickets;

    /**
     * The retry interval of one latch (§5.1.2, §5.3.2): after the N_r-th failed acquisition of a line this loop posts
     * no atomic on its latch word for {@code C·RTT/N_r}, RTT the last atomic's round trip on that word. A hot word's
     * atomics queue at the memory node's NIC (a conflicting atomic holds its address, 18 us under {@code cx5}), so
     * the measured RTT grows with the queue and the interval with it: the retries back off as the word congests.
     */
    private static final class Pace {
        long notBeforeNs;
        int failures;
    }

    /** C of the resend interval C·RTT/N_r; {@link SelccModule#DEFAULT_RESEND_NS} is C times an idle 2 us RTT. */
    static final int RESEND_C = 4;

    /** Commits write redo records and write through (package doc "Dead compute nodes"): participants may die. */
    private final boolean recoverable;
    /**
     * Cluster nodes: the memory nodes' releases and the host's recoveries of dead incarnations heard ({@link #heard}),
     * asked for at use (its node registers it when it starts; a cache made before would otherwise keep "not a cluster
     * node" for good), or null while there is none (other hosts).
     */
    private ReleasesHeard heardReleases;

    private LineCache(final TxnRuntime runtime, final int capacity, final int evictBatch, final long leaseNs) {
        this.runtime = runtime;
        this.recoverable = io.scythe.txn.recovery.RedoLog.of(runtime) != null;
        this.peers = runtime.peerLoops();
        if (peers == null) {
            throw new UnsupportedOperationException("selcc-2pl needs CN-to-CN messaging for its invalidations: the "
                + "simulator and the embedded cluster (bench) set it up; cluster nodes do not (issue 21)");
        }
        this.me = Participants.of(runtime);
        if (peers.number() != me) {
            throw new IllegalStateException("loop number " + peers.number() + " of the peers is not participant "
                + me + " of the transaction ids");
        }
        this.capacity = capacity;
        this.evictCap = batchedEviction ? evictionCap(capacity, evictBatch, SelccModule.evictFraction()) : 1;
        this.leaseNs = leaseNs;
        final Caches caches = REGISTRY.computeIfAbsent(peers.peers(), p -> new Caches(p.loops()));
        caches.put(peers.loopIndex(), this);
        this.slots = forwarding ? caches.slots(peers.loopIndex()) : null;
        this.slotBytes = Invalidation.SLOT_LINE_OFFSET + SelccModule.slotLineBytes();
        for (int i = 0; slots != null && i < slots.length() / slotBytes; i++) {
            freeSlots.add(i);
        }
    }

    /** This loop's cache, made on first use. */
    public static LineCache of(final TxnRuntime runtime) {
        return runtime.extension(KEY, r -> new LineCache(r, SelccModule.cacheFrames(), SelccModule.evictBatch(),
            SelccModule.leaseNs()));
    }

    /** What {@link #sampleInvariants} found: frames checked (not busy, memo M or S), words checked and the violations. */
    record Sampled(long frames, long words, List<String> violations) {
    }

    /**
     * The latch-word invariants of the digest's §7.2 over {@code caches} at one moment (tests, issue 21 acceptance:
     * "sampled under load"; in the simulator every loop runs on one thread, so a sample taken between two events sees
     * one consistent moment). Each frame with no global step in flight ({@code busy} false: a step's FAA/CAS may have
     * landed before the frame's memo follows it) is checked against the word {@code wordAt} reads at its memory node:
     * memo M names this participant as the word's exclusive holder (so at most one M a line, the paper's "memo = M iff
     * latch.x = that CN"), memo S has its reader bit set ("memo = S implies its bit is set"); and no such S frame of
     * one participant stands beside such an M frame of another ("x != 0 implies only transient reader bits": a settled
     * S frame's bit is not transient).
     *
     * <p>The reverse direction over the words of {@code lines} (and of every cached frame): a word's exclusive holder
     * has the line Modified in its cache, or a step on it in flight (the frame busy: an acquisition whose CAS or
     * handover landed before its answer came, a handover it serves) or its eviction's release in flight; a reader bit
     * likewise names a participant that holds the line Shared, is busy with it (a Shared FAA about to be undone, a
     * downgrade) or evicting it. A participant the word names that has no cache among {@code caches} is a violation
     * too. A word held by nobody's cache is a latch leaked while the run goes on (the end's {@code locks_left_held}
     * sees only what is left at quiescence). Reads only; changes nothing (not even the caches' LRU order).
     */
    static Sampled sampleInvariants(final java.util.Collection<LineCache> caches,
                                    final java.util.Collection<Line> lines,
                                    final java.util.function.ToLongFunction<Line> wordAt) {
        final List<String> bad = new ArrayList<>();
        final Map<Line, int[]> settled = new HashMap<>(); // line -> {M holder or 0, an S participant or 0}
        final Map<Integer, Map<Line, Frame>> byParticipant = new HashMap<>();
        final java.util.Set<Line> words = new java.util.LinkedHashSet<>(lines);
        long checked = 0;
        for (final LineCache c : caches) {
            final Map<Line, Frame> mine = new HashMap<>();
            byParticipant.put(c.me, mine);
            for (final Frame f : c.frames.values()) { // iterating: frames.get would reorder the LRU
                mine.put(f.line, f);
                words.add(f.line);
                if (f.busy || f.memo == Memo.I) {
                    continue;
                }
                checked++;
                final long word = wordAt.applyAsLong(f.line);
                final String where = where(f.line, word);
                if (f.memo == Memo.M && LatchWord.holder(word) != c.me) {
                    bad.add("participant " + c.me + " holds " + where + " Modified but the word names holder "
                        + LatchWord.holder(word));
                }
                if (f.memo == Memo.S && !LatchWord.reads(word, c.me)) {
                    bad.add("participant " + c.me + " holds " + where + " Shared without its reader bit");
                }
                final int[] seen = settled.computeIfAbsent(f.line, l -> new int[2]);
                seen[f.memo == Memo.M ? 0 : 1] = c.me;
                if (seen[0] != 0 && seen[1] != 0 && seen[0] != seen[1]) {
                    bad.add(where + ": Modified at participant " + seen[0] + " while participant " + seen[1]
                        + " holds it Shared");
                }
            }
        }
        final Map<Integer, LineCache> cacheOf = new HashMap<>();
        for (final LineCache c : caches) {
            cacheOf.put(c.me, c);
        }
        for (final Line line : words) {
            final long word = wordAt.applyAsLong(line);
            final int holder = LatchWord.holder(word);
            if (holder != 0) {
                reverse(bad, cacheOf.get(holder), byParticipant.get(holder), holder, line, word, Memo.M);
            }
            for (long r = LatchWord.readers(word); r != 0; r &= r - 1) {
                final int p = Long.numberOfTrailingZeros(r) + 1;
                reverse(bad, cacheOf.get(p), byParticipant.get(p), p, line, word, Memo.S);
            }
        }
        return new Sampled(checked, words.size(), bad);
    }

    /** One participant a word names ({@code as} M: its holder, S: a reader): its cache must show it (see above). */
    private static void reverse(final List<String> bad, final LineCache cache, final Map<Line, Frame> frames,
                                final int participant, final Line line, final long word, final Memo as) {
        if (cache == null) {
            bad.add(where(line, word) + " names participant " + participant + (as == Memo.M ? " holder" : " reader")
                + ", which has no cache");
            return;
        }
        final Frame f = frames.get(line);
        if ((f != null && (f.busy || f.memo == as)) || cache.evicting.containsKey(line)) {
            return;
        }
        bad.add(where(line, word) + " names participant " + participant + (as == Memo.M ? " holder" : " reader")
            + " but its cache has the line " + (f == null ? "not at all" : f.toString()) + ", no step in flight");
    }

    private static String where(final Line line, final long word) {
        return line.node() + "@" + line.address() + " (word " + Long.toHexString(word) + ")";
    }

    /** Registers the invalidation handler on one compute node's peers. */
    static void serve(final CnPeers peers) {
        final int receiveSlots = SelccModule.receiveSlots();
        if (receiveSlots > 0) { // registered now, before the loops serve: peers WRITE into them one-sided
            final Caches caches = REGISTRY.computeIfAbsent(peers, p -> new Caches(p.loops()));
            final long bytes = (long) receiveSlots * (Invalidation.SLOT_LINE_OFFSET + SelccModule.slotLineBytes());
            for (int loop = 0; loop < peers.loops(); loop++) {
                caches.slots[loop] = peers.register("selcc.slots." + loop, bytes);
            }
        }
        peers.handle(Invalidation.RPC, (request, responder) -> {
            final Caches caches = REGISTRY.get(peers);
            final LineCache cache = caches == null ? null : caches.get(peers.loopIndex());
            if (cache == null) {
                responder.reply(Invalidation.status(Invalidation.NOT_HELD)); // this loop never cached a line
                return;
            }
            try {
                cache.handle(request, responder);
            } catch (final RuntimeException e) {
                if (!responder.answered()) {
                    responder.fail(1, "selcc invalidation handler failed: " + e);
                }
                throw e;
            }
        });
    }

    /**
     * Registers the recovery barrier's answer ({@link RecoveryBarrier}) on one compute node's peers: each loop answers
     * for its own cache; a loop that never cached a line handed nothing over and acknowledges at once.
     */
    static void serveBarrier(final CnPeers peers) {
        peers.handle(RecoveryBarrier.RPC, (request, responder) -> {
            final Caches caches = REGISTRY.get(peers);
            final LineCache cache = caches == null ? null : caches.get(peers.loopIndex());
            final int answer;
            try {
                answer = RecoveryBarrier.answer(request.payload(), request.payloadOffset(), request.payloadLength(),
                    SelccModule.releases(peers), incarnation -> cache == null || cache.settledFor(incarnation));
            } catch (final IllegalArgumentException malformed) {
                responder.fail(io.scythe.rrpc.RpcException.FIRST_APPLICATION_CODE, malformed.getMessage());
                return;
            }
            final UnsafeBuffer reply = new UnsafeBuffer(new byte[4]);
            reply.putInt(0, answer);
            responder.reply(reply);
        });
    }

    int participant() {
        return me;
    }

    /** Frames cached (tests, end-of-run checks). */
    public int size() {
        return frames.size();
    }

    // ------------------------------------------------------------------------------------------------ frames

    /** The frame of a line, made (memo I) if absent; null while the line's eviction is in flight. */
    Frame frame(final String node, final long address, final int rkey, final int lineBytes) {
        final Line line = new Line(node, address);
        Frame f = frames.get(line);
        if (f == null) {
            if (evicting.containsKey(line) || makingRoom.containsKey(line)) {
                return null;
            }
            if (!batchedEviction && frames.size() >= capacity) { // ablation: the miss waits for its victim's release
                final Future<Void> room = evictLru(null);
                if (room != null) {
                    makingRoom.put(line, room);
                    room.onComplete(v -> makingRoom.remove(line));
                    return null;
                }
            }
            f = new Frame(line, rkey, lineBytes);
            f.lastUsedNs = runtime.timers().nowNs();
            frames.put(line, f);
            if (frames.size() > capacity) {
                evictLru(f);
            }
            startSweeping();
        }
        return f;
    }

    /** Forgets a frame that holds nothing (memo I) and nobody uses. */
    void forgetIfInvalid(final Frame f) {
        if (f.memo == Memo.I && f.idle() && frames.get(f.line) == f) {
            frames.remove(f.line);
            answerWaiting(f);
        }
    }

    /** γ of the lease (§5.3.1): local acquisitions of a wanted frame before the loop yields it. */
    int gamma() {
        return gamma;
    }

    /**
     * The lease ran out on {@code f} (wanted by another participant, taken γ times locally since, idle now): its
     * global latch is released at once (flushed if dirty), so the requester's next try takes it.
     */
    void yieldIfDue(final Frame f) {
        if (f.wanted && f.sinceWanted >= gamma && f.idle() && f.memo != Memo.I && frames.get(f.line) == f) {
            Stats.YIELDED.increment();
            evict(List.of(f));
        }
    }

    /** A local latch taken on a frame whose memo allowed it with no verb (a lock that needed a global step never). */
    static void hit() {
        Stats.HITS.increment();
    }

    void used(final Frame f) {
        f.lastUsedNs = runtime.timers().nowNs();
    }

    // ------------------------------------------------------------------------------------------ acquisition

    private static AbortException locked(final Frame f, final String why) {
        Stats.count("abort: " + why);
        return new AbortException(AbortReason.LOCKED, "line " + f.line.node + "@" + f.line.address + ": " + why);
    }

    private Future<RdmaChannel> channel(final Frame f) {
        return runtime.channel(f.line.node);
    }

    /**
     * Counts an acquisition's outcome and virtual time by kind for the stats report: taken at the first round,
     * taken later (after invalidations), or failed.
     */
    private Future<Void> timed(final String kind, final Frame f, final Future<Void> step) {
        if (!Stats.enabled) {
            return step;
        }
        final long start = runtime.timers().nowNs();
        return step.andThen(done -> Stats.time(kind + (done.failed() ? " failed" : f.round == 0 ? " round0"
            : " later"), runtime.timers().nowNs() - start));
    }

    /** Counts a verb's (or a local wait's) virtual time since {@code start} for the stats report, by {@code kind}. */
    private void verbTime(final String kind, final long start) {
        if (Stats.enabled) {
            Stats.time(kind, runtime.timers().nowNs() - start);
        }
    }

    /** Runs a global step of {@code f} with it busy, and frees it after, whatever the outcome. */
    private <T> Future<T> busy(final Frame f, final Supplier<Future<T>> step) {
        f.busy = true;
        final Future<T> done = step.get().andThen(ignored -> {
            f.busy = false;
            f.acquiring = false;
            f.upgrading = false;
            f.serving = false;
            f.yieldTo = 0;
            f.pending = null;
        });
        if (f.busy) {
            f.pending = done;
        }
        return done;
    }

    /**
     * Completes once {@code f} is not busy or its line's eviction landed: a local flow waits for the local latch's
     * holder (a global step of this loop), never for a transaction's lock.
     */
    Future<Void> settled(final Frame f) {
        final Future<?> pending = f == null ? null : f.pending;
        if (pending != null && Stats.enabled) {
            final long start = runtime.timers().nowNs();
            pending.onComplete(done -> verbTime("wait for this loop's step", start));
        }
        return pending == null ? Future.succeededFuture() : pending.<Void>transform(ignored ->
            Future.succeededFuture());
    }

    /** Completes once the eviction of the line at {@code address} of {@code node} landed (at once if none is). */
    Future<Void> evicted(final String node, final long address) {
        final Line line = new Line(node, address);
        final Future<Void> landing = evicting.getOrDefault(line, makingRoom.get(line));
        return landing == null ? Future.succeededFuture() : landing;
    }

    /** A verb that must land (an undo, a release): posted again while refused for now, else the loop gives up. */
    private <T> Future<T> mustLand(final String what, final Supplier<Future<T>> verb) {
        final long start = runtime.timers().nowNs();
        return Reposts.untilAccepted(runtime.timers(), verb).andThen(done -> verbTime("land " + what, start))
            .recover(e -> {
            runtime.giveUp("selcc: " + what + " failed: " + e);
            return Future.failedFuture(new NotServingException("selcc: " + what + " failed and this loop gave up",
                e));
        });
    }

    /** Posts a doorbell whose atomic must not be left in doubt: refused for now fails plainly, else the loop gives up. */
    private Future<Doorbell> postAcquire(final Doorbell batch, final String what) {
        final long start = runtime.timers().nowNs();
        return batch.post().andThen(done -> verbTime("post " + what, start)).recover(e -> {
            if (io.scythe.txn.Refusal.forNow(e)) {
                return Future.failedFuture(e);
            }
            runtime.giveUp("selcc: " + what + " failed after it was posted: " + e);
            return Future.failedFuture(new NotServingException("selcc: " + what + " in doubt; this loop gave up", e));
        });
    }

    /** I -> S: FAA +bit with the READ in one doorbell; an X holder shows: undo, PeerRd to it, retry or take the copy. */
    Future<Void> acquireShared(final Frame f, final boolean mayWait) {
        final Future<Void> notYet = SelccModule.notYet(runtime); // a restarted node before its barrier
        if (notYet != null) {
            return notYet;
        }
        f.mayWait = mayWait;
        Stats.ACQUIRES.increment();
        f.acquiring = true;
        f.drops = 0;
        final long paced = pacedNs(f);
        if (paced > 0 && !mayWait) {
            return Future.failedFuture(locked(f, "Shared: its retry interval C·RTT/N_r is not over, and this one "
                + "holds other lines"));
        }
        final long spin = Math.max(paced, readerSpin.delayNs(f.line, runtime.timers().nowNs()));
        if (spin > paced) { // a writer starved by this participant's reads asked lately: give it a window first
            Stats.count("reader spun");
            return paced(f, timed("S" + (mayWait ? " wait" : " nowait") + " spun", f, busy(f, () -> runtime.timers()
                .after(spin).compose(v -> acquireShared(f, 0)))));
        }
        return paced(f, timed("S" + (mayWait ? " wait" : " nowait"), f, busy(f, () -> after(paced,
            () -> acquireShared(f, 0)))));
    }

    private Future<Void> acquireShared(final Frame f, final int round) {
        f.round = round;
        final long sent = runtime.timers().nowNs();
        return channel(f).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int faa = batch.fetchAndAdd(f.latchAddress(), f.rkey, LatchWord.share(me));
            batch.read(f.line.address, f.rkey, f.image, 0, f.lineBytes);
            return postAcquire(batch, "a Shared FAA").map(b -> b.result(faa));
        }).andThen(done -> f.atomicRttNs = runtime.timers().nowNs() - sent).compose(previous -> {
            final int holder = LatchWord.holder(previous);
            if (holder == 0) {
                f.memo = Memo.S;
                return Future.succeededFuture();
            }
            return mustLand("undoing a Shared FAA", () -> channel(f).compose(ch -> ch.fetchAndAdd(f.latchAddress(),
                f.rkey, LatchWord.unshare(me)))).compose(v -> invalidate(f, Invalidation.PEER_RD, holder))
                .compose(status -> {
                    if (status == Invalidation.GRANTED) {
                        f.memo = Memo.S; // case 2: the holder flushed, set both bits and forwarded its copy
                        return Future.succeededFuture();
                    }
                    return again(f, round, status, "Shared", next -> acquireShared(f, next));
                });
        });
    }

    /** I -> M: CAS 0 -> (me, 0) with the READ; a holder: PeerWr to it (case 1) or to every reader (case 3). */
    Future<Void> acquireExclusive(final Frame f, final boolean mayWait) {
        final Future<Void> notYet = SelccModule.notYet(runtime); // a restarted node before its barrier
        if (notYet != null) {
            return notYet;
        }
        f.mayWait = mayWait;
        Stats.ACQUIRES.increment();
        f.acquiring = true;
        f.drops = 0;
        final long paced = pacedNs(f);
        if (paced > 0 && !mayWait) {
            return Future.failedFuture(locked(f, "Exclusive: its retry interval C·RTT/N_r is not over, and this one "
                + "holds other lines"));
        }
        return paced(f, timed("X" + (mayWait ? " wait" : " nowait"), f, busy(f, () -> after(paced,
            () -> acquireExclusive(f, 0)))));
    }

    private Future<Void> acquireExclusive(final Frame f, final int round) {
        f.round = round;
        if (round == 0) {
            f.askedReaders = 0;
        }
        final long sent = runtime.timers().nowNs();
        return channel(f).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(f.latchAddress(), f.rkey, LatchWord.FREE, LatchWord.exclusive(me));
            batch.read(f.line.address, f.rkey, f.image, 0, f.lineBytes);
            return postAcquire(batch, "an Exclusive CAS").map(b -> b.result(cas));
        }).andThen(done -> f.atomicRttNs = runtime.timers().nowNs() - sent).compose(previous -> {
            if (previous == LatchWord.FREE) {
                f.memo = Memo.M;
                starvedWriter(f);
                return Future.succeededFuture();
            }
            final int holder = LatchWord.holder(previous);
            if (holder == me) {
                runtime.giveUp("selcc: latch word " + LatchWord.toString(previous) + " names this participant "
                    + "as holder while its memo is I");
                return Future.failedFuture(new NotServingException("selcc: latch and memo disagree"));
            }
            final Future<Integer> asked = holder != 0 ? invalidate(f, Invalidation.PEER_WR, holder)
                : invalidateReaders(f, LatchWord.readers(previous) & ~LatchWord.bit(me));
            if (holder != 0) {
                f.askedReaders = 0;
            }
            return asked.compose(status -> {
                if (status == Invalidation.GRANTED) {
                    f.memo = Memo.M; // case 1: handed over, the copy forwarded
                    starvedWriter(f);
                    return Future.succeededFuture();
                }
                return again(f, round, status, "Exclusive", next -> acquireExclusive(f, next));
            });
        });
    }

    /**
     * S -> M: CAS (0, bit) -> (me, 0), after invalidating the other readers when it fails; after
     * {@link #UPGRADE_TRIES} the fallback: FAA -bit (memo I), then I -> M (the copy is READ again: callers check its
     * version).
     */
    Future<Void> upgrade(final Frame f, final boolean mayWait) {
        final Future<Void> notYet = SelccModule.notYet(runtime); // a restarted node before its barrier
        if (notYet != null) {
            return notYet;
        }
        f.mayWait = mayWait;
        Stats.UPGRADES.increment();
        f.acquiring = true;
        f.upgrading = true;
        f.yieldTo = 0;
        f.yieldWaits = 0;
        f.drops = 0;
        final long paced = pacedNs(f);
        if (paced > 0 && !mayWait) {
            return Future.failedFuture(locked(f, "upgrade: its retry interval C·RTT/N_r is not over, and this one "
                + "holds other lines"));
        }
        return paced(f, timed("U" + (mayWait ? " wait" : " nowait"), f, busy(f, () -> after(paced,
            () -> upgrade(f, 0)))));
    }

    private Future<Void> upgrade(final Frame f, final int tries) {
        if (f.yieldTo != 0) {
            return upgradeFallback(f);
        }
        if (tries == 0 && f.yieldWaits == 0) {
            f.askedReaders = 0;
        }
        f.round = tries;
        final long mine = LatchWord.share(me);
        final long sent = runtime.timers().nowNs();
        return channel(f).compose(ch -> ch.compareAndSwap(f.latchAddress(), f.rkey, mine, LatchWord.exclusive(me)))
            .andThen(done -> f.atomicRttNs = runtime.timers().nowNs() - sent)
            .recover(e -> io.scythe.txn.Refusal.forNow(e) ? Future.failedFuture(e)
                : mustLand("an upgrade CAS", () -> Future.failedFuture(e)))
            .compose(previous -> {
                if (previous == mine) {
                    f.memo = Memo.M;
                    starvedWriter(f);
                    return Future.succeededFuture();
                }
                if (tries + 1 >= UPGRADE_TRIES) {
                    return upgradeFallback(f);
                }
                final long others = LatchWord.readers(previous) & ~LatchWord.bit(me);
                return invalidateReaders(f, others).compose(status -> {
                    if (f.yieldTo != 0) { // a lower participant upgrades too: it wins the tie-break
                        return upgradeFallback(f);
                    }
                    if (status == Invalidation.YIELDING && f.yieldWaits++ < UPGRADE_TRIES) {
                        // a higher participant upgrading too drops its Shared for this one: CAS again once it landed
                        return runtime.timers().after(resendInterval(f, tries + 1)).compose(v -> upgrade(f, tries));
                    }
                    return status != Invalidation.DROPPED ? upgrade(f, tries + 1) : f.mayWait ? runtime.timers()
                        .after(resendInterval(f, tries + 1)).compose(v -> upgrade(f, tries + 1))
                        : Future.failedFuture(locked(f, "upgrade: a reader's transaction holds it"));
                });
            });
    }

    /**
     * The upgrade's fallback: FAA -bit (memo I), then I -> M (the copy is READ again: callers check its version). Also
     * how an upgrade yields in the symmetric race (two readers upgrading, each invalidating the other, each busy and
     * so dropping the other's message): the higher participant gives up its Shared at once, so the lower one's next
     * CAS can succeed; a deterministic tie-break, without which neither ever won.
     */
    private Future<Void> upgradeFallback(final Frame f) {
        Stats.count("upgrade " + (f.yieldTo != 0 ? "yielded (tie-break)" : "fallback"));
        runtime.tookPath(f.yieldTo != 0 ? UPGRADE_YIELDED : UPGRADE_FALLBACK);
        f.yieldTo = 0;
        f.upgrading = false;
        return mustLand("releasing Shared for the upgrade's fallback", () -> channel(f).compose(ch ->
            ch.fetchAndAdd(f.latchAddress(), f.rkey, LatchWord.unshare(me)))).compose(v -> {
                f.memo = Memo.I;
                return acquireExclusive(f, 0);
            });
    }

    /** Records the priority a starved writer took {@code f} Exclusive at (priority matching, when on). */
    private void starvedWriter(final Frame f) {
        final int priority = f.aged + f.round + 1;
        f.writerPriority = priorityMatching && priority >= SelccModule.SPIN_MIN_PRIORITY ? priority : 0;
    }

    /** {@code C·RTT/N_r} for the {@code n}-th retry of {@code f}'s latch; at least {@link SelccModule#resendNs}/n. */
    private long resendInterval(final Frame f, final int n) {
        return Math.max(resendNs, RESEND_C * f.atomicRttNs) / Math.max(1, n);
    }

    /**
     * How long this loop must still wait before posting an atomic on {@code f}'s latch word (0: at once), and the
     * priority the acquisition starts at (its line's failures so far: priority aging across attempts, §5.3.2).
     */
    private long pacedNs(final Frame f) {
        final Pace p = paces.get(f.line);
        f.aged = p == null ? 0 : Math.min(254, p.failures);
        return p == null ? 0 : Math.max(0, p.notBeforeNs - runtime.timers().nowNs());
    }

    private Future<Void> after(final long ns, final Supplier<Future<Void>> step) {
        if (ns <= 0) {
            return step.get();
        }
        Stats.count("paced");
        return runtime.timers().after(ns).compose(v -> step.get());
    }

    /**
     * Records how an acquisition of {@code f} ended: taken, the line's pace is forgotten; given up (a conflict), the
     * next atomic on its word waits {@code C·RTT/N_r}, N_r the failures in a row.
     */
    private Future<Void> paced(final Frame f, final Future<Void> acquisition) {
        return acquisition.andThen(done -> {
            final boolean movedOn = f.movedOn;
            f.movedOn = false;
            if (done.succeeded()) {
                paces.remove(f.line);
            } else if (movedOn) {
                // Its holders answered "not held": the line was passing from one to the next, none held it in use.
                // Pacing that as a conflict kept the next atomic back C·RTT/N_r while the line was there to take:
                // B-link write-only θ0.99 at 8 CNs lost 11 % that way (a hot leaf handed from CN to CN).
                Stats.count("not paced: its holder moved on");
                // But it ages (§5.3.2: priority grows with the retries of the latch, whatever ended them). Unaged, a
                // writer whose case 3 found new sharers each round, or a reader chasing a line that writers hand
                // between them, started every attempt at priority 1 and starved on one hot line for a whole run
                // (selcc21: SelccHotLineFairnessSimTest): its messages never won a handover and never set the
                // readers' spin flag.
                final Pace p = paces.computeIfAbsent(f.line, l -> new Pace());
                p.failures++;
                p.notBeforeNs = Math.max(p.notBeforeNs, runtime.timers().nowNs()); // no wait; kept a lease (sweep)
            } else if (done.cause() instanceof AbortException) {
                final Pace p = paces.computeIfAbsent(f.line, l -> new Pace());
                p.failures++;
                p.notBeforeNs = runtime.timers().nowNs() + resendInterval(f, p.failures);
            }
        });
    }

    /**
     * The next round of an acquisition after its invalidation was answered {@code status}: at once after "not held"
     * or "released" (the latch word must be read again), after the resend interval {@code C·RTT / N_r} (§5.1.2:
     * shorter as the retries grow) after "dropped", but only for a transaction that holds no other line (one that
     * holds some aborts at once: waiting while holding could deadlock across compute nodes); past
     * {@link SelccModule#rounds} rounds the attempt aborts.
     */
    private Future<Void> again(final Frame f, final int round, final int status, final String what,
                               final java.util.function.IntFunction<Future<Void>> next) {
        if (status == Invalidation.DROPPED && !f.mayWait) {
            return Future.failedFuture(locked(f, what + ": a transaction there holds it, and this one holds other "
                + "lines (no wait while holding: no deadlock)"));
        }
        if (status == Invalidation.DROPPED && ++f.drops >= rounds) {
            return Future.failedFuture(locked(f, what + " not taken in " + rounds + " rounds (last answer dropped: in "
                + "use there)"));
        }
        if (round + 1 >= chaseRounds * rounds) {
            f.movedOn = true; // not a conflict: the line moves from holder to holder (paced() sets no interval)
            return Future.failedFuture(locked(f, what + " not taken in " + chaseRounds * rounds + " rounds (last "
                + "answer not held: its holder moved on)"));
        }
        if (status == Invalidation.DROPPED || status == Invalidation.YIELDING) { // yielding: its FAA must land
            return runtime.timers().after(resendInterval(f, round + 1)).compose(v -> next.apply(round + 1));
        }
        return next.apply(round + 1);
    }

    // ------------------------------------------------------------------------------------------ invalidation

    /**
     * The rare path of a new sharer joining during case 3 (or an upgrade's invalidation of its readers): between two
     * CASes of one acquisition, a participant not among the readers the last round invalidated FAA'd its reader bit
     * in (the word named no holder, so it took the line Shared and READ the memory node's copy). The next CAS fails on
     * its bit and invalidates it too; never is the line taken Exclusive beside it. Reported to
     * {@link TxnRuntime#tookPath} (the simulator's {@code sim.paths_taken}; {@code SelccNewSharerSimTest}).
     */
    public static final String NEW_SHARER_IN_CASE_3 = "selcc: a new sharer joined while case 3 invalidated the readers";

    /** {@link #upgradeFallback} after {@link #UPGRADE_TRIES} failed CASes (a {@link TxnRuntime#tookPath}). */
    public static final String UPGRADE_FALLBACK = "selcc: upgrade fallback (Shared released, Exclusive taken anew)";

    /** {@link #upgradeFallback} by the symmetric race's tie-break (a {@link TxnRuntime#tookPath}). */
    public static final String UPGRADE_YIELDED = "selcc: upgrade yielded to a lower participant (tie-break)";

    /** Sends PeerWr to every participant in {@code readers}: DROPPED if one dropped it, else RELEASED. */
    private Future<Integer> invalidateReaders(final Frame f, final long readers) {
        Stats.count("case 3 readers " + Long.bitCount(readers));
        if ((readers & ~f.askedReaders) != 0 && f.askedReaders != 0) {
            Stats.count("case 3 new sharer");
            runtime.tookPath(NEW_SHARER_IN_CASE_3);
        }
        f.askedReaders = readers;
        final List<Future<Integer>> asked = new ArrayList<>();
        long r = readers;
        while (r != 0) {
            final int p = Long.numberOfTrailingZeros(r) + 1;
            r &= r - 1;
            asked.add(invalidate(f, Invalidation.PEER_WR_SHARED, p));
        }
        return Future.all(asked).map(all -> {
            int status = Invalidation.RELEASED;
            for (final Future<Integer> a : asked) {
                if (a.result() == Invalidation.GRANTED) { // the receiver discards a PeerWr meant for a reader
                    throw new IllegalStateException("a reader's invalidation was answered with a handover");
                }
                if (a.result() == Invalidation.DROPPED) {
                    return Invalidation.DROPPED;
                }
                if (a.result() == Invalidation.YIELDING) {
                    status = Invalidation.YIELDING;
                }
            }
            return status;
        });
    }

    /** One invalidation to participant {@code target}; a forwarded copy lands in {@code f}'s image. */
    private Future<Integer> invalidate(final Frame f, final int kind, final int target) {
        return ask(f, kind, target).compose(status -> status != Invalidation.GRANTED || forwarding
            ? Future.succeededFuture(status)
            : mustLand("the READ of a handed-over line", () -> channel(f).compose(ch -> ch.read(f.line.address,
                f.rkey, f.image, 0, f.lineBytes))).map(status)); // forwarding off: the holder flushed it
    }

    private Future<Integer> ask(final Frame f, final int kind, final int target) {
        if (recoverable && SelccRecovery.cleared(runtime.fabric(), f.line.node, target)) {
            Stats.count("invalidation to a recovered participant: answered at once");
            return Future.succeededFuture(kind == Invalidation.PEER_WR_SHARED ? Invalidation.RELEASED
                : Invalidation.NOT_HELD);
        }
        Stats.SENT.increment();
        final long sentNs = runtime.timers().nowNs();
        final PeerLoops.Address where = peers.where().apply(target);
        // a copy may come back (cases 1, 2): name a free receive slot for the holder to WRITE it into (§4.4.1)
        final boolean copyExpected = kind != Invalidation.PEER_WR_SHARED && forwarding;
        final Integer slot = !copyExpected || f.lineBytes > slotBytes - Invalidation.SLOT_LINE_OFFSET ? null
            : freeSlots.poll();
        if (slot == null && copyExpected) {
            Stats.count("no receive slot: a copy would ride in the reply");
        }
        final long ticket = slot == null ? 0 : ++tickets;
        // Cluster nodes: the incarnation this call reaches, resolved once (a failed call waits for its recovery news,
        // never another incarnation's: deadHolder); null on other hosts, or an unknown peer (the call fails at once).
        final String reached = heard() == null ? null : peers.peers().fabricNodeOf(where.peer());
        final UnsafeBuffer request = Invalidation.request(kind, me, f.line.node, f.rkey, f.line.address,
            f.lineBytes, Math.min(255, f.aged + f.round + 1), f.mayWait, slot == null ? 0 : slots.rkey(),
            slot == null ? 0 : slots.address() + (long) slot * slotBytes, ticket);
        final Future<io.scythe.rrpc.RpcReply> call = reached == null ? peers.peers().call(where.peer(), where.loop(),
            Invalidation.RPC, request, 0, request.capacity())
            : peers.peers().callNode(reached, where.loop(), Invalidation.RPC, request, 0, request.capacity());
        return (recoverable ? unlessRecovered(call, f.line.node, target) : call)
            .transform(done -> {
                if (done.failed() && done.cause() instanceof Recovered) {
                    if (slot != null) { // a dead holder WRITEs nothing any more, but the slot is not named again
                        Stats.count("receive slot retired: its invalidation's target was recovered");
                    }
                    Stats.count("invalidation to a recovered participant: answered");
                    return kind == Invalidation.PEER_WR_SHARED ? Future.succeededFuture(Invalidation.RELEASED)
                        : handedOverByDead(f, kind);
                }
                if (done.failed()) {
                    if (slot != null) { // the holder may still WRITE into it (the call timed out): never named again
                        Stats.count("receive slot retired: its invalidation failed");
                    }
                    if (reached != null && kind != Invalidation.PEER_WR_SHARED && mayHandOverLate(done.cause())) {
                        return deadHolder(f, kind, target, reached, done.cause());
                    }
                    if (reached == null && heard() != null) {
                        // A cluster node whose holder the directory no longer names (its member left: dead, its
                        // recovery to come): nothing was sent, so nothing of ours can land; the attempt aborts and is
                        // retried rather than failing the client (review of selccbarfix).
                        return Future.failedFuture(locked(f, "holder not in the cluster (its recovery pending)"));
                    }
                    return Future.failedFuture(done.cause());
                }
                final org.agrona.DirectBuffer reply = done.result().payload();
                int status = reply.getByte(0);
                boolean slotReusable = slot != null;
                if (status == Invalidation.FORWARDED) {
                    if (slot == null) {
                        throw new IllegalStateException("a copy forwarded into a receive slot this one never named");
                    }
                    fromSlot(f, slot, ticket);
                    status = Invalidation.GRANTED;
                } else if (status == Invalidation.GRANTED && forwarding) {
                    Stats.count(slot == null ? "forwarded in the reply: no receive slot"
                        : "forwarded in the reply: the WRITE into the slot failed");
                    // A failed WRITE may still land later (as RedoStep says of tcp frames): a next holder's WRITE
                    // could then be overwritten by this stale one, so the slot is never named again.
                    slotReusable = false;
                    f.image.putBytes(0, reply, Invalidation.REPLY_LINE_OFFSET, f.lineBytes);
                    f.headerDirty = reply.getByte(Invalidation.REPLY_HEADER_DIRTY_OFFSET) != 0;
                    f.dirty = reply.getLong(Invalidation.REPLY_DIRTY_OFFSET);
                } else if (status == Invalidation.GRANTED) {
                    Stats.count("handover without forwarding: line READ from the memory node");
                    f.headerDirty = false;
                    f.dirty = DirtyBounds.CLEAN;
                }
                if (slotReusable) {
                    freeSlots.push(slot);
                } else if (slot != null) {
                    Stats.count("receive slot retired: the WRITE into it failed");
                }
                if (Stats.enabled) {
                    Stats.time("rpc kind " + kind + " answer " + status, runtime.timers().nowNs() - sentNs);
                }
                if (status == Invalidation.DROPPED) {
                    Stats.DROPPED.increment();
                } else if (status == Invalidation.GRANTED) {
                    Stats.GRANTED.increment();
                }
                return Future.succeededFuture(status);
            });
    }

    /**
     * The X holder that {@code kind} (PeerRd or PeerWr) was sent to died and was recovered before it answered: its
     * handover FAA may have landed (the word then names this participant holder, case 1, or carries its reader bit,
     * case 2), its reply never will. The line is READ from the memory node (current: recoverable commits write
     * through, and the dead holder's bits are cleared) and the word decides: GRANTED as if the copy had come, else
     * NOT_HELD (the next round takes the free word).
     */
    private Future<Integer> handedOverByDead(final Frame f, final int kind) {
        return reread(f).map(word -> handedOver(f, kind, word) ? Invalidation.GRANTED : Invalidation.NOT_HELD);
    }

    /** READs {@code f}'s line (the word and the copy) from its memory node into its image; the latch word read. */
    private Future<Long> reread(final Frame f) {
        return mustLand("the READ of a line whose holder was recovered", () -> channel(f).compose(ch -> ch.read(
            f.line.address, f.rkey, f.image, 0, f.lineBytes))).map(v -> f.image.getLong(
            ObjectLayout.PROTOCOL_WORD_OFFSET));
    }

    /**
     * Whether {@code f}'s copy (held here: memo S or M, idle) shows a CAS word, {@code casWord}, of an insert that the
     * line's memory node buried since: its inserter's compute node died and that node's dead-node step ran
     * ({@link SelccRecovery#buriedBy}; recoverable runs). The burial rewrote the memory node's copy only; a copy taken
     * before it and kept in caches (forwarded between survivors, never READ again) shows the insert locked for good,
     * and every transaction that reads the line aborts ({@link #refreshed}).
     */
    boolean buriedSince(final Frame f, final long casWord) {
        if (!recoverable || casWord == 0 || !f.idle()) {
            return false;
        }
        final ReleasesHeard heard = heard(); // cluster nodes: the memory node's release told, else the host's record
        return heard != null ? heard.buriedOrAsk(f.line.node, casWord)
            : SelccRecovery.buriedBy(runtime.fabric(), f.line.node, casWord);
    }

    /**
     * READs {@code f}'s line again from its memory node ({@link #buriedSince}: the copy is older than a burial), the
     * frame busy meanwhile; fails as a conflict if the copy still shows {@code casWord}. The memory node's copy is
     * current: this participant holds the line, recoverable commits write through, and no write passed a copy showing
     * the insert locked. The READ goes into a buffer of its own, copied over the image once it completed: a READ that
     * failed (it may still land) fails the access as a conflict and cannot write the frame later, so the loop need not
     * give up (review, stop 39: mustLand gave the loop up for a READ, which leaves nothing in doubt).
     */
    Future<Void> refreshed(final Frame f, final long casWord) {
        Stats.count("copy older than a dead inserter's burial: READ again");
        final org.agrona.concurrent.UnsafeBuffer fresh = new org.agrona.concurrent.UnsafeBuffer(new byte[f.lineBytes]);
        return busy(f, () -> Reposts.untilAccepted(runtime.timers(), () -> channel(f).compose(ch ->
            ch.read(f.line.address, f.rkey, fresh, 0, f.lineBytes)))).transform(read -> {
                if (read.failed()) {
                    return Future.failedFuture(locked(f, "its READ again after the burial failed: " + read.cause()));
                }
                f.image.putBytes(0, fresh, 0, f.lineBytes);
                f.dirty = DirtyBounds.CLEAN; // a copy showing another node's CAS word was never written here
                f.headerDirty = false;
                return f.image.getLong(ObjectLayout.CAS_LOCK_OFFSET) == casWord
                    ? Future.failedFuture(locked(f, "its insert still locked after the burial")) : Future.succeededFuture();
            });
    }

    /** Whether {@code word}, just READ with {@code f}'s copy, shows the handover {@code kind} asked for landed. */
    private boolean handedOver(final Frame f, final int kind, final long word) {
        if (!granted(kind, word, me)) {
            return false;
        }
        Stats.count("handover from a recovered holder had landed");
        f.headerDirty = false; // the copy READ is the memory node's (recoverable commits write through)
        f.dirty = DirtyBounds.CLEAN;
        return true;
    }

    /** Whether latch word {@code word} gives {@code me} what invalidation {@code kind} asked its holder for. */
    static boolean granted(final int kind, final long word, final int me) {
        return kind == Invalidation.PEER_RD ? LatchWord.reads(word, me) : LatchWord.holder(word) == me;
    }

    /**
     * Whether a failed invalidation may still be handed over by its holder ({@link #deadHolder} waits for the word):
     * the call was cut off (the holder's node left, the connection failed) or timed out, or the holder answered
     * {@link Invalidation#HANDOVER_IN_DOUBT} (its handover verbs failed after they were posted: its loop gave up, so
     * its node is recovered and the wait ends), so the holder's FAA may have landed or may still land. Any other error
     * reply (the handler failed before posting anything) means the holder did not hand over: the call fails at once
     * (review, stop 39: such a failure polled a live holder's word for up to {@code scythe.selcc.deadHolderWaitNs}).
     */
    static boolean mayHandOverLate(final Throwable cause) {
        return cause instanceof io.scythe.rrpc.RpcException e && (e.code() == io.scythe.rrpc.RpcException.DISCONNECTED
            || e.code() == io.scythe.rrpc.RpcException.TIMED_OUT || e.code() == Invalidation.HANDOVER_IN_DOUBT);
    }

    /** How long a cluster node's requester waits for a failed holder's word to settle ({@link #deadHolder}). */
    static final long DEAD_HOLDER_POLL_NS = 5_000_000L;

    /**
     * Cluster nodes: the PeerRd or PeerWr to X holder {@code target} failed (its node died, or the reply was lost),
     * and its handover FAA may have landed or may still land: a dead node's verbs in flight land until the memory
     * node stops serving its connection, and this process never learns what the memory nodes' step cleared, only that
     * the dead incarnation was released or recovered ({@link ReleasesHeard}). The word decides ({@link #untilDecided}):
     * it is READ again every {@link #DEAD_HOLDER_POLL_NS} while it names {@code target} and {@code reached}, the
     * incarnation the call went to, is not known recovered ({@link #calledRecovered}: its release or recovery heard,
     * else the host's record asked), for at most {@code scythe.selcc.deadHolderWaitNs}. Before, one READ decided: a
     * READ before the FAA landed failed the call, the FAA then named this participant holder while its memo was I, and
     * the loop gave up at its next CAS (a selcc-occ chaos run, seed 3). Decided per incarnation, not by a count of the
     * node's recoveries (issue 21 review, finding 3: a call that reached the live restarted incarnation, then the old
     * one's late news, moved the count while the live one's FAA could still land).
     */
    private Future<Integer> deadHolder(final Frame f, final int kind, final int target, final String reached,
                                       final Throwable cause) {
        Stats.count("invalidation failed on a cluster node: the word decides");
        final long polls = Math.max(1, SelccModule.deadHolderWaitNs() / DEAD_HOLDER_POLL_NS);
        return untilDecided(() -> reread(f), calledRecovered(heard(), reached), me, target, kind,
            ns -> runtime.timers().after(ns), polls, cause).map(status -> {
                if (status == Invalidation.GRANTED) {
                    handedOver(f, kind, f.image.getLong(ObjectLayout.PROTOCOL_WORD_OFFSET));
                }
                return status;
            });
    }

    /**
     * Whether incarnation {@code reached} (the one a failed call went to) is known recovered: its release or recovery
     * heard in {@code heard}, else the host's record asked (at most once a second; known at a later poll). Never
     * another incarnation of its node.
     */
    static java.util.function.BooleanSupplier calledRecovered(final ReleasesHeard heard, final String reached) {
        return () -> heard != null && heard.releasedOrAsk(reached);
    }

    /**
     * The decision of {@link #deadHolder}, apart for tests: {@code read} the word; GRANTED when it gives {@code me}
     * what {@code kind} asked for (the handover landed); NOT_HELD when it no longer names {@code target} holder (its
     * FAA cannot come any more: only its own FAA or the memory node's step changes its field) or when the incarnation
     * called was known recovered before the READ ({@code recovered}: its step ran, so a holder named now is a new
     * incarnation); else {@code sleep} and READ again, at most {@code polls} times, then fail with {@code cause}.
     * {@code recovered} is asked before each READ: a recovery known after it may have followed a FAA that landed after
     * it.
     */
    static Future<Integer> untilDecided(final Supplier<Future<Long>> read,
                                        final java.util.function.BooleanSupplier recovered, final int me,
                                        final int target, final int kind,
                                        final java.util.function.LongFunction<Future<Void>> sleep,
                                        final long polls, final Throwable cause) {
        final boolean before = recovered.getAsBoolean();
        return read.get().compose(word -> {
            if (granted(kind, word, me)) {
                return Future.succeededFuture(Invalidation.GRANTED);
            }
            if (LatchWord.holder(word) != target || before) {
                Stats.count(before ? "failed holder recovered: the word decided"
                    : "failed holder let the line go");
                return Future.succeededFuture(Invalidation.NOT_HELD);
            }
            if (polls <= 1) {
                Stats.count("failed holder still named after the wait: gave up");
                return Future.failedFuture(cause);
            }
            return sleep.apply(DEAD_HOLDER_POLL_NS).compose(v -> untilDecided(read, recovered, me, target, kind,
                sleep, polls - 1, cause));
        });
    }

    /**
     * Cluster nodes: whether the incarnation that sent a message ({@code told}) is known recovered: a memory node's
     * release of it heard, its recovery told by the host, or its restarted incarnation's barrier question
     * ({@link RecoveryBarrier}), all recorded per incarnation in {@link ReleasesHeard}. Never by a count of its node's
     * recoveries (issue 21): a message of the live restarted incarnation, which reuses the participant number, is not
     * taken for the dead one's when the old one's news comes after it.
     */
    private boolean recoveredSince(final int participant, final Told told) {
        return told != Told.NONE && senderRecovered(told, heard());
    }

    /**
     * The decision of {@link #recoveredSince}, apart for tests: a release or recovery of the sender's incarnation
     * heard ({@code heard}; null: none kept).
     */
    static boolean senderRecovered(final Told told, final ReleasesHeard heard) {
        return heard != null && heard.released(told.sender);
    }

    /**
     * What a holder knew of an invalidation's sender when its message came, on cluster nodes: its incarnation (the
     * request's client, its fabric identity, which a memory node's release names: {@link ReleasesHeard}).
     * {@link #NONE} on other hosts.
     */
    record Told(String sender) {
        static final Told NONE = new Told(null);
    }

    /** {@link Told} of {@code requester} (incarnation {@code sender}) now. */
    private Told told(final int requester, final String sender) {
        return heard() == null ? Told.NONE : new Told(sender);
    }

    /**
     * Cluster nodes: what this node heard of the memory nodes' releases of dead incarnations
     * ({@link SelccModule#releases}), asked for at use; null on other hosts and in runs that
     * recover nothing.
     */
    private ReleasesHeard heard() {
        if (recoverable && heardReleases == null) {
            heardReleases = SelccModule.releases(peers.peers());
        }
        return heardReleases;
    }

    /**
     * Cluster nodes: whether a memory node released incarnation {@code sender} (an invalidation's client): it is dead
     * and fenced everywhere ({@link ReleasesHeard#released}).
     */
    private boolean releasedHere(final String sender) {
        final ReleasesHeard heard = heard();
        return heard != null && heard.released(sender);
    }

    /** An invalidation's target was declared dead and its bits cleared while the call waited. */
    private static final class Recovered extends io.vertx.core.VertxException {
        Recovered(final int participant) {
            super("participant " + participant + " was recovered (its latch bits cleared)", true);
        }
    }

    /**
     * {@code call} to {@code target}, failed with {@link Recovered} as soon as a dead-node step cleared the target's
     * bits (checked every resend interval): a survivor's call to a dead compute node does not wait for its call
     * bound (a second), only for the recovery. Only in recoverable runs (a redo log): others keep their events.
     */
    private Future<io.scythe.rrpc.RpcReply> unlessRecovered(final Future<io.scythe.rrpc.RpcReply> call,
                                                            final String node, final int target) {
        final io.vertx.core.Promise<io.scythe.rrpc.RpcReply> answered = io.vertx.core.Promise.promise();
        call.onComplete(done -> {
            if (done.succeeded()) {
                answered.tryComplete(done.result());
            } else if (SelccRecovery.cleared(runtime.fabric(), node, target)) {
                answered.tryFail(new Recovered(target)); // failed by the peerLeft below (or its bound): recovered
            } else if (SelccRecovery.dead(runtime.fabric(), target)) {
                // Failed by the peerLeft of another line's watch: the target is dead, cleared on another memory node
                // but not yet on this line's. watchRecovered fails it as Recovered once this node's step ran (the
                // word is settled then); failing it now with the peerLeft's error failed the transaction with an
                // error instead of an abort (crash explorer, selcc-2pl smallbank seed 4, after CLEARED went per MN).
                Stats.count("call to a dead participant failed before its line's memory node cleared it: waits");
            } else {
                answered.tryFail(done.cause());
            }
        });
        watchRecovered(answered, node, target);
        return answered.future();
    }

    private void watchRecovered(final io.vertx.core.Promise<io.scythe.rrpc.RpcReply> answered, final String node,
                                final int target) {
        runtime.timers().after(SelccModule.resendNs()).onComplete(t -> {
            if (answered.future().isComplete() || SelccRecovery.dead(runtime.fabric(), me)) {
                return; // answered, or this participant is the dead one (its loop's timers may still fire)
            }
            if (SelccRecovery.cleared(runtime.fabric(), node, target)) {
                answered.tryFail(new Recovered(target));
                peerRecovered(target);
            } else {
                watchRecovered(answered, node, target);
            }
        });
    }

    /**
     * Participant {@code target} was recovered: its compute node is dead, and the calls still in flight to it (this
     * one's and any other loop's of this node) are failed at once by {@code CnPeers#peerLeft}, as a cluster's
     * membership does when a node leaves. Left in flight, each kept its loop's RRPC client busy-polling for a reply
     * until its call bound (a second), through the whole drain of a simulated run: ten times its events.
     */
    private void peerRecovered(final int target) {
        final String peer = peers.where().apply(target).peer();
        if (SelccRecovery.firstToSeeLeft(peers.peers(), peer)) {
            Stats.count("dead peer's calls failed (peerLeft)");
            peers.peers().peerLeft(peer, "its SELCC participants were recovered (latch bits cleared)");
        }
    }

    /**
     * Takes the copy a holder WRITEs into receive slot {@code slot} (§4.4.1): the ticket must be the one the
     * invalidation named (a slot is named by one invalidation at a time, and retired if its call failed), else the
     * copy is someone else's and the loop gives up rather than take it.
     */
    private void fromSlot(final Frame f, final int slot, final long ticket) {
        final org.agrona.concurrent.AtomicBuffer b = slots.buffer();
        final int at = slot * slotBytes;
        final long found = b.getLong(at + Invalidation.SLOT_TICKET_OFFSET);
        if (found != ticket) {
            runtime.giveUp("selcc: receive slot " + slot + " holds ticket " + found + ", not " + ticket);
            throw new IllegalStateException("selcc: a forwarded copy with ticket " + found + " where " + ticket
                + " was named");
        }
        b.getBytes(at + Invalidation.SLOT_LINE_OFFSET, f.image, 0, f.lineBytes);
        f.headerDirty = b.getByte(at + Invalidation.SLOT_HEADER_DIRTY_OFFSET) != 0;
        f.dirty = b.getLong(at + Invalidation.SLOT_DIRTY_OFFSET);
        b.putLong(at + Invalidation.SLOT_TICKET_OFFSET, 0); // taken: a second take of it fails
        Stats.count("forwarded by one-sided WRITE into a receive slot");
    }

    /**
     * The handler of an invalidation on this loop (try-lock: a frame in use does not serve it now). A frame in use by
     * local transactions remembers the message when its sender may wait (it holds nothing else: §5.3.2's remembered
     * messages) and serves the highest-priority one as soon as the local transactions let go
     * ({@link #localReleased}), or answers it dropped after {@code deferNs} times its priority (at most
     * {@link SelccModule#deferPriorityCap} times: a sender that failed more often is kept longer); otherwise (the sender holds other lines,
     * or the frame is busy with a global step of its own) it is dropped at once.
     */
    private void handle(final RpcRequest request, final RpcResponder responder) {
        final int at = request.payloadOffset();
        final int kind = request.payload().getByte(at + Invalidation.KIND_OFFSET);
        final int requester = request.payload().getByte(at + Invalidation.REQUESTER_OFFSET) & 0xff;
        final int priority = request.payload().getByte(at + Invalidation.PRIORITY_OFFSET) & 0xff;
        final boolean senderMayWait = (request.payload().getByte(at + Invalidation.FLAGS_OFFSET)
            & Invalidation.FLAG_MAY_WAIT) != 0;
        final Line line = new Line(Invalidation.node(request.payload(), at),
            request.payload().getLong(at + Invalidation.ADDRESS_OFFSET));
        final long slotAddress = request.payload().getLong(at + Invalidation.SLOT_ADDRESS_OFFSET);
        final Slot to = slotAddress == 0 ? null : new Slot(request.payload().getInt(at + Invalidation.SLOT_RKEY_OFFSET),
            slotAddress, request.payload().getLong(at + Invalidation.TICKET_OFFSET));
        if (fromRecovered(requester) || releasedHere(request.client())) {
            Stats.count("invalidation from a recovered participant: dropped");
            responder.reply(Invalidation.status(Invalidation.DROPPED)); // nobody reads it: the sender is dead
            return;
        }
        // Cluster nodes: a recovery told after this, or a release of its incarnation, names its sender dead.
        final Told told = told(requester, request.client());
        if (kind == Invalidation.PEER_WR_SHARED) {
            final Frame f = frames.get(line);
            readerSpin.writerWaiting(line, priority, runtime.timers().nowNs(), f == null ? 0 : f.atomicRttNs);
        }
        decide(kind, requester, priority, senderMayWait, line, to, told, responder, false);
    }

    /**
     * What {@link #handle} does with a parsed invalidation on this loop's frame of {@code line}; {@code waited}: it
     * waited once already for a serve in flight (it is not kept twice).
     */
    private void decide(final int kind, final int requester, final int priority, final boolean senderMayWait,
                        final Line line, final Slot to, final Told told, final RpcResponder responder,
                        final boolean waited) {
        final Frame f = frames.get(line);
        if (f == null || f.memo == Memo.I) {
            responder.reply(Invalidation.status(Invalidation.NOT_HELD)); // invalidated or evicted already
            return;
        }
        if (kind == Invalidation.PEER_WR_SHARED && f.upgrading && f.memo == Memo.S && yields(f, requester, priority)) {
            // The symmetric upgrade race: both want X from S. The lower participant wins: this upgrade yields (drops
            // its Shared before its next CAS) and says so, so the sender CASes again rather than giving up. With the
            // reader grants, the higher priority wins first (selcc24, below).
            f.yieldTo = requester;
            Stats.count("upgrade race: yielding to a lower participant");
            responder.reply(Invalidation.status(Invalidation.YIELDING));
            return;
        }
        if (kind == Invalidation.PEER_RD && f.memo == Memo.M && priority < f.writerPriority) {
            Stats.count("drop kind 1 priority matching");
            responder.reply(Invalidation.status(Invalidation.DROPPED)); // the reader must have aged to the writer's
            return;
        }
        if (kind == Invalidation.PEER_RD && readerGrants && f.memo == Memo.S && !f.busy) {
            // Outdated (it downgraded meanwhile, to this reader or another): the reader's next FAA takes the line, in
            // use here or not. Before selread it was dropped while a local reader held the frame (a resend interval).
            Stats.count("PeerRd to a Shared copy: not held");
            responder.reply(Invalidation.status(Invalidation.NOT_HELD));
            return;
        }
        if (kind == Invalidation.PEER_RD && readerGrants && f.busy && f.serving && f.pending != null && !waited) {
            // Busy handing the line over (or downgrading it to another reader): answered once that lands, from the
            // state it leaves (Shared: "not held", the reader's next FAA takes the line with the copy just flushed,
            // §4.4.2's "future concurrent readers"; another holder: "not held", the reader asks that one). A wait
            // for a verb in flight, never for a lock: no deadlock, whatever the sender holds.
            Stats.count("PeerRd kept until the serve in flight landed");
            f.pending.onComplete(done -> decide(kind, requester, priority, senderMayWait, line, to, told,
                responder, true));
            return;
        }
        if (kind == Invalidation.PEER_WR_SHARED && readerGrants && f.busy && f.serving && f.pending != null
            && !waited) {
            // A reader busy serving another writer's invalidation (its release FAA in flight): answered once that
            // lands, as a PeerRd is (selcc24). Dropped, the second of two writers invalidating the same readers lost
            // every round to the first (each reader busy with the first's message) and waited its resend interval:
            // SelccHotLineFairnessSimTest's two writers, 1,523 us for one XLock with the grants on.
            Stats.count("PeerWrShared kept until the serve in flight landed");
            f.pending.onComplete(done -> decide(kind, requester, priority, senderMayWait, line, to, told,
                responder, true));
            return;
        }
        if (!f.idle()) {
            if (!f.busy) {
                f.wanted = true; // local transactions hold it: the lease starts counting
            }
            if (!f.busy && senderMayWait && deferNs > 0) {
                Stats.count("deferred kind " + kind);
                remember(f, new Waiting(kind, requester, priority, responder, to, told));
                return;
            }
            Stats.count("drop kind " + kind + (f.busy ? " busy" : " in use"));
            responder.reply(Invalidation.status(Invalidation.DROPPED)); // a local thread uses it
            return;
        }
        serve(f, kind, requester, to, told, responder);
    }

    /**
     * Whether this loop's upgrade of {@code f} yields to a writer's PeerWrShared from {@code requester} sent at
     * {@code priority}. Without the reader grants the lower participant always wins (a deterministic tie-break). With
     * them, §5.3.2's order first: the higher priority wins, the lower participant among equals (selcc24). A writer
     * that just granted the line to its readers keeps it Shared and upgrades for its next write at priority 1; by the
     * tie-break alone it beat a starved writer of a higher number at every round (two writers: 1,523 us for one
     * XLock, SelccHotLineFairnessSimTest). Both sides may yield on messages of different rounds: each then drops its
     * Shared and CASes anew, one wins; no deadlock.
     */
    private boolean yields(final Frame f, final int requester, final int priority) {
        if (!readerGrants) {
            return requester < me;
        }
        final int own = Math.min(255, f.aged + f.round + 1);
        return priority > own || priority == own && requester < me;
    }

    /** The sender's receive slot a copy is WRITten into (§4.4.1): its address and rkey, and the ticket to carry. */
    record Slot(int rkey, long address, long ticket) {
    }

    /** An invalidation a frame in use remembered: answered when the frame is idle again, or dropped at a deadline. */
    record Waiting(int kind, int requester, int priority, RpcResponder responder, Slot to, Told told) {
        Waiting(final int kind, final int requester, final int priority, final RpcResponder responder) {
            this(kind, requester, priority, responder, null, Told.NONE);
        }
    }

    private void remember(final Frame f, final Waiting w) {
        if (f.waiting == null) {
            f.waiting = new ArrayList<>(2);
        }
        f.waiting.add(w);
        runtime.timers().after(deferNs * Math.min(Math.max(1, w.priority), deferPriorityCap)).onComplete(v -> {
            if (f.waiting != null && f.waiting.remove(w)) {
                Stats.count("deferred then dropped");
                w.responder.reply(Invalidation.status(Invalidation.DROPPED));
            }
        });
    }

    /**
     * The local transactions let go of {@code f} (commit or abort): a remembered invalidation is served now, before
     * any other local flow takes the frame again (§5.3.2: ownership goes to the highest-priority sender, the earliest
     * among equals); the others are answered "not held" once that step landed (they read the latch word again and
     * message its new holders).
     */
    void localReleased(final Frame f) {
        if (f.waiting == null || f.waiting.isEmpty() || !f.idle()) {
            return;
        }
        final List<Waiting> waiting = f.waiting;
        f.waiting = null;
        waiting.removeIf(w -> {
            if (!fromRecovered(w.requester) && !recoveredSince(w.requester, w.told)) {
                return false;
            }
            Stats.count("deferred invalidation from a recovered participant: dropped");
            w.responder.reply(Invalidation.status(Invalidation.DROPPED));
            return true;
        });
        if (waiting.isEmpty()) {
            return;
        }
        if (f.memo == Memo.I || frames.get(f.line) != f) {
            notHeld(waiting);
            return;
        }
        final Waiting best = highest(waiting);
        waiting.remove(best);
        Stats.count("served deferred kind " + best.kind);
        if (readerGrants && handover && best.kind == Invalidation.PEER_RD && f.memo == Memo.M) {
            downgrade(f, readersWith(best, waiting, me)).onComplete(done -> notHeld(waiting));
            return;
        }
        serve(f, best.kind, best.requester, best.to, best.told, best.responder).onComplete(done -> notHeld(waiting));
    }

    /** Answers the invalidations a frame that holds nothing any more remembered: "not held". */
    private static void answerWaiting(final Frame f) {
        if (f.waiting != null) {
            final List<Waiting> waiting = f.waiting;
            f.waiting = null;
            notHeld(waiting);
        }
    }

    /**
     * {@code best} (a PeerRd) and every other remembered PeerRd of a participant other than this one and the ones
     * already taken, of a priority no remembered writer's exceeds (§5.3.2's order: a starved writer is not made to
     * invalidate more readers than those ahead of it), taken out of {@code waiting}: the readers one case-2 FAA grants
     * ({@link #downgrade}). Precondition: {@code waiting} is what {@link #localReleased} kept (invalidations from
     * participants recovered since were answered there); {@link #downgrade} does not repeat {@link #serve}'s
     * outdated and recovered checks for the extra readers, so a new caller must filter them alike.
     */
    static List<Waiting> readersWith(final Waiting best, final List<Waiting> waiting, final int me) {
        int writers = 0;
        for (final Waiting w : waiting) {
            if (w.kind != Invalidation.PEER_RD) {
                writers = Math.max(writers, w.priority);
            }
        }
        final List<Waiting> readers = new ArrayList<>(List.of(best));
        long bits = LatchWord.bit(best.requester);
        for (final java.util.Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            final Waiting w = it.next();
            if (w.kind == Invalidation.PEER_RD && w.priority >= writers && w.requester != me
                && (bits & LatchWord.bit(w.requester)) == 0) {
                bits |= LatchWord.bit(w.requester);
                readers.add(w);
                it.remove();
            }
        }
        return readers;
    }

    /** The remembered invalidation served first: the highest priority, the earliest among equals. */
    static Waiting highest(final List<Waiting> waiting) {
        if (waiting.isEmpty()) {
            throw new IllegalArgumentException("no remembered invalidation to serve");
        }
        Waiting best = waiting.get(0);
        for (final Waiting w : waiting) {
            if (w.priority > best.priority) {
                best = w;
            }
        }
        return best;
    }

    /**
     * The JVM's totals so far, always counted: {hits (a local latch on a frame whose memo allowed it, no verb), global
     * acquisitions (latch verbs: a miss or an upgrade), invalidation messages sent}. A run's share is the difference of
     * two readings (the micro-benchmark's hit ratio and invalidations per operation, SELCC Figs. 12-14).
     */
    public static long[] totals() {
        return new long[] {Stats.HITS.sum(), Stats.ACQUIRES.sum(), Stats.SENT.sum()};
    }

    /** Counts causes from now on (tests): as {@code -Dscythe.selcc.stats=true} does, without the report at exit. */
    public static void countCauses(final boolean on) {
        Stats.enabled = on;
        Stats.LARGEST_BATCH.reset();
    }

    /** The most victims one LRU eviction took since {@link #countCauses} was last called (tests). */
    public static long largestEvictionBatch() {
        return Stats.LARGEST_BATCH.get();
    }

    /** How often {@code cause} was counted (with {@code -Dscythe.selcc.stats=true}; tests and reports). */
    public static long counted(final String cause) {
        final java.util.concurrent.atomic.LongAdder n = Stats.CAUSES.get(cause);
        return n == null ? 0 : n.sum();
    }

    private static void notHeld(final List<Waiting> waiting) {
        for (final Waiting w : waiting) {
            w.responder.reply(Invalidation.status(Invalidation.NOT_HELD));
        }
        waiting.clear();
    }

    /**
     * Handover case 2 (§4.4.2) to every reader of {@code readers} (PeerRd from distinct participants other than this
     * one, their senders not recovered; the frame Modified and idle): the dirty range flushed and ONE FAA of
     * {@code (-me, bit(me) | their bits)} ({@link LatchWord#downgradeAll}), the copy forwarded to each in parallel,
     * then each answered as a one-reader case 2 is. Granting them all at once (issue 21, selread) is this
     * implementation's reading of §5.3.2's remembered messages: the paper hands ownership to the highest-priority
     * sender, and when that is a reader, Shared is no exclusive ownership, so every remembered reader can have it in
     * the same atomic (each of their bits was clear: a reader undoes its Shared FAA before it asks, and asks once).
     */
    private Future<Void> downgrade(final Frame f, final List<Waiting> readers) {
        f.serving = true;
        long bits = 0;
        final List<Future<Boolean>> forwarded = new ArrayList<>(readers.size());
        final List<String> pending = new ArrayList<>(readers.size());
        for (final Waiting r : readers) {
            bits |= LatchWord.bit(r.requester);
            forwarded.add(forwardTo(f, r.requester, r.to, false, DirtyBounds.CLEAN));
            pending.add(pendingTo(r.told));
        }
        if (readers.size() > 1) {
            Stats.count("case 2 readers granted in one FAA " + readers.size());
        }
        final long delta = LatchWord.downgradeAll(me, bits);
        return busy(f, () -> Future.all(Future.all(forwarded), mustLand("a case-2 handover",
            () -> channel(f).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                addFlush(batch, f);
                batch.fetchAndAdd(f.latchAddress(), f.rkey, delta);
                return batch.post();
            })).compose(v -> {
                Future<Void> checked = Future.succeededFuture();
                for (final Waiting r : readers) {
                    checked = checked.compose(c -> unlessRecoveredMeanwhile(f, r.requester, r.told,
                        LatchWord.bit(r.requester)));
                }
                return checked;
            }))).transform(done -> {
                if (done.failed()) {
                    // In doubt (the loop gave up: the FAA may still land): pending for good, so this loop never
                    // acknowledges the requesters' incarnations to the recovery barrier (issue 21 review, finding 5).
                    for (final Waiting r : readers) {
                        r.responder.fail(Invalidation.HANDOVER_IN_DOUBT, String.valueOf(done.cause()));
                    }
                    return Future.succeededFuture();
                }
                pending.forEach(this::settledOne);
                f.memo = Memo.S;
                f.dirty = DirtyBounds.CLEAN;
                f.headerDirty = false;
                f.wanted = false; // the lease's counters stop: the participant that wanted it got it
                f.sinceWanted = 0;
                for (int i = 0; i < readers.size(); i++) {
                    final Waiting r = readers.get(i);
                    final boolean copied = forwarded.get(i).result();
                    watchLate(f, r.requester, r.to, copied, r.told, LatchWord.bit(r.requester));
                    r.responder.reply(!forwarding ? Invalidation.status(Invalidation.GRANTED)
                        : copied ? Invalidation.status(Invalidation.FORWARDED)
                        : Invalidation.granted(f.image, f.lineBytes, false, DirtyBounds.CLEAN));
                }
                return Future.succeededFuture();
            });
    }

    /**
     * Serves an invalidation on an idle frame: discards an outdated one, else hands over (cases 1, 2) or releases (3).
     * A copy goes to the sender by one-sided WRITE into its receive slot ({@code to}, §4.4.1) at once, in parallel with
     * the handover FAA (case 1) or with the case-2 flush and FAA; the answer ({@link Invalidation#FORWARDED}) waits for
     * both (a transient holder field must not be seen by a sender that took the line), and carries the copy itself
     * when the sender named no slot or the WRITE failed.
     */
    private Future<Void> serve(final Frame f, final int kind, final int requester, final Slot to, final Told told,
                               final RpcResponder responder) {
        if ((kind == Invalidation.PEER_WR_SHARED) != (f.memo == Memo.S)) {
            responder.reply(Invalidation.status(Invalidation.NOT_HELD)); // outdated: another ownership than seen
            return Future.succeededFuture();
        }
        if (fromRecovered(requester) || recoveredSince(requester, told)) { // a remembered one, sender recovered since
            Stats.count("invalidation from a recovered participant: dropped");
            responder.reply(Invalidation.status(Invalidation.DROPPED));
            return Future.succeededFuture();
        }
        f.serving = true; // set for busy(): a PeerRd meanwhile waits for this step ({@link #readerGrants})
        if (!handover && f.memo == Memo.M) { // Fig. 7a's baseline: release (flushed), the requester retries
            return busy(f, () -> mustLand("a release asked for (no handover)", () -> channel(f).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                addFlush(batch, f);
                batch.fetchAndAdd(f.latchAddress(), f.rkey, LatchWord.unexclusive(me));
                return batch.post();
            }))).transform(done -> {
                if (done.failed()) {
                    responder.fail(Invalidation.HANDOVER_IN_DOUBT, String.valueOf(done.cause()));
                    return Future.succeededFuture();
                }
                Stats.count("released for a requester (no handover)");
                f.memo = Memo.I;
                f.dirty = DirtyBounds.CLEAN;
                f.headerDirty = false;
                f.wanted = false;
                f.sinceWanted = 0;
                forgetIfInvalid(f);
                responder.reply(Invalidation.status(Invalidation.RELEASED));
                return Future.succeededFuture();
            });
        }
        if (kind == Invalidation.PEER_RD) { // case 2: flush, both Shared, forward
            return downgrade(f, List.of(new Waiting(kind, requester, 0, responder, to, told)));
        }
        final boolean modified = f.memo == Memo.M;
        final long delta = modified ? LatchWord.handover(me, requester) : LatchWord.unshare(me);
        final boolean flush = modified && !forwarding; // forwarding off: the next owner READs the memory node's copy
        // case 1: ownership moves as Modified, nothing flushed: the copy goes with its dirtiness
        final Future<Boolean> forwarded = modified && !flush ? forwardTo(f, requester, to, f.headerDirty, f.dirty)
            : Future.succeededFuture(false);
        final String pending = modified ? pendingTo(told) : null;
        return busy(f, () -> Future.all(forwarded, mustLand(modified ? "a case-1 handover" : "a case-3 release",
            () -> channel(f).compose(ch -> {
                if (!flush) {
                    return ch.fetchAndAdd(f.latchAddress(), f.rkey, delta).<Void>mapEmpty();
                }
                final Doorbell batch = ch.doorbell();
                addFlush(batch, f);
                batch.fetchAndAdd(f.latchAddress(), f.rkey, delta);
                return batch.post().<Void>mapEmpty();
            })).compose(v -> !modified ? Future.<Void>succeededFuture()
                : unlessRecoveredMeanwhile(f, requester, told, LatchWord.exclusive(requester))))).transform(done -> {
                if (done.failed()) {
                    // In doubt (the loop gave up: the FAA may still land): pending for good, so this loop never
                    // acknowledges the requester's incarnation to the recovery barrier (issue 21 review, finding 5).
                    responder.fail(Invalidation.HANDOVER_IN_DOUBT, String.valueOf(done.cause()));
                    return Future.succeededFuture();
                }
                settledOne(pending);
                f.memo = Memo.I;
                forgetIfInvalid(f);
                if (modified) {
                    watchLate(f, requester, to, forwarded.result(), told, LatchWord.exclusive(requester));
                }
                responder.reply(!modified ? Invalidation.status(Invalidation.RELEASED)
                    : flush ? Invalidation.status(Invalidation.GRANTED)
                    : forwarded.result() ? Invalidation.status(Invalidation.FORWARDED)
                    : Invalidation.granted(f.image, f.lineBytes, f.headerDirty, f.dirty));
                if (flush) {
                    f.dirty = DirtyBounds.CLEAN;
                    f.headerDirty = false;
                }
                return Future.succeededFuture();
            });
    }

    /**
     * Whether the sender of an invalidation, {@code requester}, was declared dead and its bits cleared (recoverable
     * runs only: others keep their events). Its message, sent before it died and served now, must not hand it the
     * line: a handover FAA or a downgrade landing after the memory node's dead-node step set its holder field or reader
     * bit again, which nobody would ever clear (package doc "Dead compute nodes": a {@code selcc-to} churn crash seed).
     */
    private boolean fromRecovered(final int requester) {
        return recoverable && SelccRecovery.dead(runtime.fabric(), requester);
    }

    /**
     * Whether {@code requester}'s bits were cleared by the dead-node step of the memory node of {@code f}'s line: a
     * handover or downgrade to it landing from now on is not cleared by anybody else ({@link #unlessRecoveredMeanwhile});
     * before that step runs, the step itself clears it.
     */
    private boolean clearedOn(final Frame f, final int requester) {
        return recoverable && SelccRecovery.cleared(runtime.fabric(), f.line.node, requester);
    }

    /**
     * After a handover (case 1) or downgrade (case 2) to {@code requester} landed: if the requester was recovered
     * meanwhile (the step may have run between this loop's decision and the FAA's landing, then missing what the FAA
     * set), its holder field or reader bit is taken out of the word by CAS, retried against the word found (survivors'
     * FAAs land meanwhile) while the word still names it: the dead participant takes nothing any more, so what names
     * it is only this FAA's. {@code guess}: the word the first CAS expects. On cluster nodes "recovered meanwhile" is
     * a release of the requester's incarnation (the message's client) by some memory node heard of
     * ({@link ReleasesHeard#released}: it is fenced on every memory node, and the step of this line's node may have
     * run before the FAA landed), or a recovery of its node told since its message came ({@code told},
     * {@link #recoveredSince}). (Not caught there: a FAA that landed after the step while the news of the release had
     * not reached this node yet, the milliseconds of one event-bus message; and a FAA that landed before the step,
     * then the step, the whole recovery and a new incarnation of the requester's node taking the line, all before this
     * check right after the FAA, would have the new incarnation's bits taken here: it reuses the participant number.)
     */
    private Future<Void> unlessRecoveredMeanwhile(final Frame f, final int requester, final Told told,
                                                  final long guess) {
        if (!clearedOn(f, requester) && !recoveredSince(requester, told)) {
            return Future.succeededFuture();
        }
        return takeBack(requester, guess, (expected, update) -> mustLand("the release of a recovered participant's "
            + "latch", () -> channel(f).compose(ch -> ch.compareAndSwap(f.latchAddress(), f.rkey, expected,
            update))));
    }

    /**
     * Cluster nodes: a handover (case 1) or downgrade (case 2) to {@code requester} landed, and nothing said it was
     * dead yet ({@link #unlessRecoveredMeanwhile} took nothing back), but the copy could not be WRITten into its
     * receive slot ({@code to}, {@code forwarded} false: its process is gone or stopped) or it named none. If it died
     * and this FAA landed after its line's memory node's step, the news that would take it back may come late (the
     * event-bus message after this check) or never (at-most-once, and only the latest {@link ReleasesHeard#KEPT}
     * kept): watched from now on ({@link #checkLate}) for at most {@code scythe.selcc.deadHolderWaitNs}, by the news
     * and, missing it, the host's record ({@link ReleasesHeard#releasedOrAsk}). The latest
     * {@link #LATE_KEPT} are watched.
     */
    private void watchLate(final Frame f, final int requester, final Slot to, final boolean forwarded,
                           final Told told, final long guess) {
        if (told == Told.NONE || forwarded && to != null || heard() == null
            || peers.where().apply(requester).peer().equals(peers.peers().node()) || recoveredSince(requester, told)) {
            return; // other hosts; the copy reached it; a loop of this node; or taken back already
        }
        if (late.size() >= LATE_KEPT) {
            // The oldest one not being taken back: one whose take-back failed is kept until it lands, or the barrier
            // would pass with its bit perhaps still in the word (review: the retried entry reached the head and was
            // evicted like any other).
            for (final Iterator<Late> it = late.iterator(); it.hasNext(); ) {
                if (!it.next().takingBack) {
                    it.remove();
                    Stats.count("late take-back: the oldest watched forgotten");
                    LATE_DROPPED.incrementAndGet();
                    break;
                }
            }
        }
        Stats.count("late take-back: a handover watched");
        watch(new Late(f, requester, told, guess, runtime.timers().nowNs()));
    }

    /** Watches {@code l}, checked once {@link #LATE_CHECK_NS} passed (a timer while any is watched). */
    private void watch(final Late l) {
        late.add(l);
        if (!lateArmed) {
            lateArmed = true;
            runtime.timers().after(LATE_CHECK_NS).onComplete(t -> checkLate());
        }
    }

    /** Whether a timer of {@link #checkLate} is pending (one at a time). */
    private boolean lateArmed;

    /**
     * Watched handovers dropped in this process (the queue full, past the window, or a failed take-back past it):
     * each may leave its requester's bit in a latch word for good; a cluster node's health shows it
     * ({@link SelccModule#hearReleases}, {@code lateTakeBacksDropped}).
     */
    static final java.util.concurrent.atomic.AtomicLong LATE_DROPPED = new java.util.concurrent.atomic.AtomicLong();

    /** Handovers watched at most ({@link #watchLate}). */
    static final int LATE_KEPT = 64;
    /** How often the watched handovers are checked ({@link #checkLate}). */
    static final long LATE_CHECK_NS = 1_000_000_000L;

    /**
     * A handover watched ({@link #watchLate}): the line's frame, to whom, what was known of it, the word expected;
     * {@code takingBack}: its requester is known dead and a take-back CAS failed ({@link #takeBackLate}), so it is
     * taken back again at each check, window or not.
     */
    record Late(Frame f, int requester, Told told, long guess, long sinceNs, boolean takingBack) {
        Late(final Frame f, final int requester, final Told told, final long guess, final long sinceNs) {
            this(f, requester, told, guess, sinceNs, false);
        }

        /** The same, its take-back to be tried again. */
        Late againAfterAFailedTakeBack() {
            return new Late(f, requester, told, guess, sinceNs, true);
        }
    }

    /** Handovers watched on this loop ({@link #watchLate}). */
    private final java.util.ArrayDeque<Late> late = new java.util.ArrayDeque<>();

    /**
     * Cluster nodes: handovers or downgrades (cases 1, 2) and late take-backs in flight, by the requester's
     * incarnation ({@link Told#sender}); what the recovery barrier waits for ({@link #settledFor}). Loop-confined.
     */
    private final Map<String, Integer> pendingTo = new java.util.HashMap<>();

    /** Counts one handover or take-back to {@code told}'s incarnation in flight; its key, or null (none counted). */
    private String pendingTo(final Told told) {
        if (told == Told.NONE || told.sender == null) {
            return null;
        }
        pendingTo.merge(told.sender, 1, Integer::sum);
        return told.sender;
    }

    /** One handover or take-back counted by {@link #pendingTo} is over. */
    private void settledOne(final String sender) {
        if (sender != null) {
            pendingTo.computeIfPresent(sender, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /**
     * The recovery barrier's question on this loop ({@link RecoveryBarrier}; the incarnation is recorded recovered
     * already): takes back at once every watched handover to {@code incarnation} (no wait for the next check), and
     * says whether this loop is done with it ({@link #settled}).
     */
    boolean settledFor(final String incarnation) {
        final long now = runtime.timers().nowNs();
        final List<Late> due = new ArrayList<>();
        for (final Iterator<Late> it = late.iterator(); it.hasNext(); ) {
            final Late l = it.next();
            if (incarnation.equals(l.told.sender)) {
                it.remove();
                due.add(l);
            }
        }
        due.forEach(l -> takeBackLate(l, now));
        return settled(incarnation, pendingTo, late);
    }

    /**
     * The decision of {@link #settledFor}, apart for tests: no handover, downgrade or take-back to
     * {@code incarnation} in flight ({@code pending}) and none watched ({@code watched}).
     */
    static boolean settled(final String incarnation, final Map<String, Integer> pending,
                           final java.util.Collection<Late> watched) {
        return !pending.containsKey(incarnation) && watched.stream().noneMatch(l -> incarnation.equals(l.told.sender));
    }

    /** What to do with a watched handover ({@link #lateDecision}). */
    enum LateStep { TAKE_BACK, WAIT, GIVE_UP }

    /**
     * The decision for a watched handover, apart for tests: take it back once a memory node's release of its
     * requester's incarnation was heard, or, that news missing or forgotten, the host's record says that
     * incarnation's recovery finished ({@link ReleasesHeard#releasedOrAsk}: asked now, known at a later check); give
     * it up past {@code windowNs}. Decided per incarnation, never by the node's recovery count:
     * a handover to a live restarted incarnation must not be taken back when the news of the old one's recovery comes
     * after it (issue 21, review of selcc11).
     */
    static LateStep lateDecision(final Late l, final ReleasesHeard heard, final long nowNs, final long windowNs) {
        // Its requester known dead and its bit perhaps still in the word: never given up (the restarted incarnation's
        // barrier waits for it, and a bit left would be taken for the restarted one's; issue 21, second review).
        return l.takingBack ? LateStep.TAKE_BACK : lateDecision(l.told, heard, nowNs - l.sinceNs, windowNs);
    }

    /** {@link #lateDecision(Late, ReleasesHeard, long, long)} of a handover whose take-back never failed. */
    static LateStep lateDecision(final Told told, final ReleasesHeard heard, final long ageNs, final long windowNs) {
        if (heard != null && heard.releasedOrAsk(told.sender())) {
            return LateStep.TAKE_BACK;
        }
        return ageNs >= windowNs ? LateStep.GIVE_UP : LateStep.WAIT;
    }

    /**
     * Checks the watched handovers ({@link #watchLate}) every {@link #LATE_CHECK_NS} while any is left: one whose
     * requester is known dead now is taken back by CAS ({@link #takeBack}: only while the word names it; a FAA that
     * landed before the step was cleared by it, and the CAS then changes nothing). A restarted incarnation reuses the
     * number, but takes no latch before this loop acknowledged its barrier question ({@link RecoveryBarrier}), which
     * waits for every watched handover to the old incarnation to be taken back or given up: what names the number
     * here is the dead one's.
     */
    private void checkLate() {
        lateArmed = false;
        final long now = runtime.timers().nowNs();
        final long window = SelccModule.deadHolderWaitNs();
        final List<Late> due = new ArrayList<>();
        for (final Iterator<Late> it = late.iterator(); it.hasNext(); ) {
            final Late l = it.next();
            final LateStep step = lateDecision(l, heard(), now, window);
            if (step == LateStep.WAIT) {
                continue;
            }
            it.remove();
            if (step == LateStep.GIVE_UP) {
                Stats.count("late take-back: watched past the window, given up");
                LATE_DROPPED.incrementAndGet();
                continue;
            }
            due.add(l);
        }
        if (!late.isEmpty() && !lateArmed) {
            lateArmed = true;
            runtime.timers().after(LATE_CHECK_NS).onComplete(t -> checkLate());
        }
        due.forEach(l -> takeBackLate(l, now));
    }

    /**
     * Takes back watched handover {@code l} (its requester known dead), counted in flight ({@link #pendingTo}); a
     * failed CAS is watched again and tried at each check and each barrier question ({@link #settledFor}) for as long
     * as it fails: its bit may still be in the word, so the barrier must not pass, and giving up (as it did past the
     * window, keeping it pending for good with nothing to retry it: the restarted incarnation's barrier was overdue
     * for ever; issue 21, second review) helps nobody. Safe to retry until this loop acknowledged the barrier
     * question of the requester's incarnation, which waits for it.
     */
    private void takeBackLate(final Late l, final long nowNs) {
        Stats.count("late take-back: requester known dead, its bits taken out");
        final String pending = pendingTo(l.told);
        takeBack(l.requester, l.guess, (expected, update) -> channel(l.f).compose(ch -> ch.compareAndSwap(
            l.f.latchAddress(), l.f.rkey, expected, update))).onComplete(ar -> {
                if (ar.failed()) {
                    Stats.count(runtime.timers().nowNs() - l.sinceNs < SelccModule.deadHolderWaitNs()
                        ? "late take-back: CAS failed, tried again"
                        : "late take-back: CAS failed past the window, tried again");
                    // The CAS only takes out what still names the requester: trying again is safe.
                    watch(l.againAfterAFailedTakeBack());
                }
                settledOne(pending); // after a re-watch: the barrier sees it pending throughout
            });
    }

    /**
     * Takes {@code requester}'s holder field or reader bit out of the word by {@code cas} (expected, new: the word
     * found), from {@code guess} on, retried against the word found while it names the requester
     * ({@link #unlessRecoveredMeanwhile}; apart for tests).
     */
    static Future<Void> takeBack(final int requester, final long guess,
                                 final java.util.function.BiFunction<Long, Long, Future<Long>> cas) {
        return cas.apply(guess, SelccRecovery.without(guess, requester)).compose(found -> {
            if (found == guess) {
                if (SelccRecovery.names(guess, requester)) {
                    Stats.count("handover to a recovered participant taken back");
                }
                return Future.<Void>succeededFuture();
            }
            return SelccRecovery.names(found, requester) ? takeBack(requester, found, cas)
                : Future.<Void>succeededFuture();
        });
    }

    /**
     * WRITEs {@code f}'s copy (with the ticket and the dirtiness the new holder inherits) into the sender's receive
     * slot {@code to}: one-sided over this loop's channel to the sender's compute node, or a local copy when the sender
     * is a loop of this node (same memory). True once it landed; false when there is no slot or the WRITE failed (the
     * copy then rides in the reply).
     */
    private Future<Boolean> forwardTo(final Frame f, final int requester, final Slot to, final boolean headerDirty,
                                      final long dirty) {
        if (to == null || !forwarding) {
            return Future.succeededFuture(false);
        }
        final UnsafeBuffer image = Invalidation.slotImage(to.ticket, f.image, f.lineBytes, headerDirty, dirty);
        final PeerLoops.Address where = peers.where().apply(requester);
        if (where.peer().equals(peers.peers().node())) {
            final Caches caches = REGISTRY.get(peers.peers());
            final io.scythe.fabric.MemoryRegion region = caches == null ? null : caches.slots(where.loop());
            if (region == null || !region.describe().contains(to.address, image.capacity())) {
                return Future.succeededFuture(false);
            }
            region.buffer().putBytes((int) (to.address - region.address()), image, 0, image.capacity());
            return Future.succeededFuture(true);
        }
        return peers.peers().channel(where.peer()).compose(ch -> ch.write(to.address, to.rkey, image, 0,
            image.capacity())).map(true).recover(e -> {
                Stats.count("forward WRITE failed: " + e.getClass().getSimpleName());
                return Future.succeededFuture(false);
            });
    }

    // ------------------------------------------------------------------------------------------ eviction

    /**
     * A recoverable commit's write-through ({@link SelccTxn}, package doc "Dead compute nodes"): the dirty copies of
     * {@code written} (latched here, Modified, their commit's redo record durable) WRITten to their memory nodes, one
     * doorbell per node, the latches kept; once every WRITE landed the frames are clean. A WRITE that fails gives the
     * loop up ({@link #mustLand}): the record stays, and recovery finishes the commit.
     */
    Future<Void> writeThrough(final List<Frame> written) {
        final Map<String, List<Frame>> byNode = new HashMap<>();
        for (final Frame f : written) {
            if (f.headerDirty || f.dirty != DirtyBounds.CLEAN) {
                byNode.computeIfAbsent(f.line.node, n -> new ArrayList<>()).add(f);
            }
        }
        final List<Future<Void>> all = new ArrayList<>(byNode.size());
        for (final Map.Entry<String, List<Frame>> e : byNode.entrySet()) {
            Stats.count("write-through doorbell");
            all.add(mustLand("a write-through", () -> runtime.channel(e.getKey()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                for (final Frame f : e.getValue()) {
                    addFlush(batch, f);
                }
                return batch.post();
            })).map(done -> {
                for (final Frame f : e.getValue()) {
                    f.dirty = DirtyBounds.CLEAN;
                    f.headerDirty = false;
                }
                return null;
            }));
        }
        return all.isEmpty() ? Future.succeededFuture() : Future.all(all).mapEmpty();
    }

    /** Whether this loop's commits keep a redo log (a recoverable run: they write through). */
    boolean recoverable() {
        return recoverable;
    }

    /**
     * {@code selcc-to}'s read in a recoverable run (package doc "Dead compute nodes"): the {@code rts} it just raised in
     * {@code f} (latched here, Exclusive) WRITten through to the memory node, 8 bytes at {@code offset} of the line;
     * the reader's commit waits for it, so no acknowledged read's raise lives only in a cache. A WRITE that fails gives
     * the loop up ({@link #mustLand}).
     */
    Future<Void> writeThroughWord(final Frame f, final int offset) {
        final UnsafeBuffer word = WordBuffer.of(f.image.getLong(offset));
        Stats.count("rts write-through");
        return mustLand("an rts write-through", () -> channel(f).compose(ch -> ch.write(f.line.address + offset,
            f.rkey, word, 0, 8)));
    }

    /**
     * The WRITEs of a dirty copy, in this order: the dirty range, the value length with the flags (a delete's
     * tombstone) and the incarnation (unchanged), then the insert's CAS word with the version word (one WRITE: they
     * are adjacent); never the latch word. The version goes last because a crash can cut a doorbell between two of
     * its WRITEs (the dead node's NIC drops what it had not executed): recovery ({@link SelccRecovery#LOCK_KIND})
     * rolls an entry forward only while the memory node's version is older than its record's, so a version that
     * landed before its value would hide a lost value from it (a crash seed of {@code selcc-occ} created money so).
     */
    private void addFlush(final Doorbell batch, final Frame f) {
        if (f.dirty != DirtyBounds.CLEAN && !dirtyBounds) { // ablation: the whole value, not its dirty range
            batch.write(f.line.address + ObjectLayout.VALUE_OFFSET, f.rkey, f.image, ObjectLayout.VALUE_OFFSET,
                f.lineBytes - ObjectLayout.VALUE_OFFSET);
        } else if (f.dirty != DirtyBounds.CLEAN) {
            final int from = ObjectLayout.VALUE_OFFSET + DirtyBounds.lower(f.dirty);
            batch.write(f.line.address + from, f.rkey, f.image, from, DirtyBounds.length(f.dirty));
        }
        if (f.headerDirty) {
            addHeaderFlush(batch, f.line.address, f.rkey, f.image);
        }
    }

    /**
     * The header's WRITEs of a line's {@code image} at {@code address}, after its data's (both views: SEL's XUnlock
     * too): the value length with the flags and the incarnation, then the CAS word with the version word, last.
     */
    static void addHeaderFlush(final Doorbell batch, final long address, final int rkey, final UnsafeBuffer image) {
        batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, rkey, image, ObjectLayout.VALUE_LENGTH_OFFSET,
            ObjectLayout.HEADER_BYTES - ObjectLayout.VALUE_LENGTH_OFFSET);
        batch.write(address + ObjectLayout.CAS_LOCK_OFFSET, rkey, image, ObjectLayout.CAS_LOCK_OFFSET,
            ObjectLayout.VERSION_OFFSET + 8 - ObjectLayout.CAS_LOCK_OFFSET);
    }

    /**
     * The victims one LRU eviction takes at most, the free-list threshold L of §5.2.1: a {@code fraction} of the
     * frames ({@code scythe.selcc.evictFraction}, default {@link SelccModule#DEFAULT_EVICT_FRACTION}), at least 1, at
     * most {@code evictBatch}. A batch that is a large share of a small cache evicts lines still in use (32 frames, 16
     * at once: hit ratio down, batching measured -17 %); the paper's caches are gigabytes, its L a sliver of them.
     */
    static int evictionCap(final int capacity, final int evictBatch, final int fraction) {
        return Math.max(1, Math.min(evictBatch, capacity / fraction));
    }

    /**
     * §5.2.1: a miss that finds no free frame (the cache over capacity once {@code made}, the frame just made for the
     * caller, is counted; it is never a victim: idle until the caller starts its acquire) takes victims from the LRU
     * tail until L - 1 frames are free again besides it (L = {@link #evictCap}; L - l_f victims, at most L), grouped per
     * memory node, one doorbell each, not waited for. Frames that hold nothing are dropped on the way (no verb). With
     * batched eviction off ({@code made} null: called before the caller's frame is made) one victim, one doorbell,
     * and the caller waits for it. Returns when the victims' releases landed, or null if there were none.
     */
    private Future<Void> evictLru(final Frame made) {
        final int target = capacity - evictCap + (made == null ? 0 : 1);
        final List<Frame> victims = new ArrayList<>();
        final Iterator<Frame> lru = frames.values().iterator();
        while (lru.hasNext() && victims.size() < evictCap && frames.size() - victims.size() > target) {
            final Frame f = lru.next();
            if (f == made) {
                continue;
            }
            if (f.idle() && f.memo == Memo.I) {
                lru.remove(); // holds nothing: dropped
            } else if (f.idle()) {
                victims.add(f);
            }
        }
        if (victims.isEmpty()) {
            return null;
        }
        Stats.LARGEST_BATCH.accumulate(victims.size());
        return evict(victims);
    }

    /**
     * Most work requests one victim adds to an eviction's doorbell ({@link #addFlush}: the dirty range, the header's
     * two WRITEs; then the FAA).
     */
    static final int EVICTION_REQUESTS_PER_FRAME = 4;

    /**
     * Releases {@code victims} (flush if dirty, then the FAA), one doorbell per memory node (more when they would not
     * fit its send queue, {@link #evictionChunks}), without waiting: the frames leave the cache at once (their images
     * are no longer written), their lines stay out of it until the doorbell landed. Returns when every doorbell
     * landed.
     */
    private Future<Void> evict(final List<Frame> victims) {
        final Map<String, List<Frame>> byNode = new HashMap<>();
        for (final Frame f : victims) {
            Stats.EVICTED.increment();
            frames.remove(f.line);
            byNode.computeIfAbsent(f.line.node, n -> new ArrayList<>()).add(f);
        }
        final List<Future<Void>> all = new ArrayList<>(byNode.size());
        for (final Map.Entry<String, List<Frame>> e : byNode.entrySet()) {
            final String node = e.getKey();
            // each doorbell its own landing, none posted again with another (a repost repeats its FAAs)
            for (final List<Frame> group : evictionChunks(e.getValue(), sendQueueDepth(node))) {
                all.add(evictGroup(node, group));
            }
        }
        return all.size() == 1 ? all.get(0) : Future.join(all).transform(done -> Future.succeededFuture());
    }

    /**
     * {@code victims} of one memory node in doorbells that fit a send queue of {@code depth}: a doorbell longer than
     * the queue is refused every time it is posted, so the lease's sweep at the end of a run (every idle frame at
     * once: 800 frames of one memory node, ~2,000 requests against 1,024) kept its latches and dirty lines to the
     * end (the gcl workload at 1 CN with --cn-work-ns 31: 509 of 5,307 writes missing from the counters, 696 latches
     * left held).
     */
    static <T> List<List<T>> evictionChunks(final List<T> victims, final int depth) {
        final int per = Math.max(1, depth / EVICTION_REQUESTS_PER_FRAME);
        if (victims.size() <= per) {
            return List.of(victims);
        }
        final List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < victims.size(); from += per) {
            chunks.add(victims.subList(from, Math.min(victims.size(), from + per)));
        }
        return chunks;
    }

    /** The send queue's depth of this loop's QPs to {@code node} (known once a channel was made). */
    private int sendQueueDepth(final String node) {
        final Future<io.scythe.bridge.RdmaChannel> ch = runtime.channel(node);
        return ch.succeeded() ? ch.result().queuePair().options().sendQueueDepth()
            : io.scythe.fabric.QpOptions.DEFAULT_SEND_QUEUE_DEPTH;
    }

    /** One doorbell of {@link #evict}: {@code group}'s flushes and releases at {@code node}. */
    private Future<Void> evictGroup(final String node, final List<Frame> group) {
        final io.vertx.core.Promise<Void> landed = io.vertx.core.Promise.promise();
        for (final Frame f : group) {
            evicting.put(f.line, landed.future());
        }
        mustLand("an eviction", () -> runtime.channel(node).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            for (final Frame f : group) {
                if (f.memo == Memo.M) {
                    addFlush(batch, f);
                    if (!plantedLeakOnEviction) {
                        batch.fetchAndAdd(f.latchAddress(), f.rkey, LatchWord.unexclusive(me));
                    }
                } else {
                    batch.fetchAndAdd(f.latchAddress(), f.rkey, LatchWord.unshare(me));
                }
            }
            return batch.post();
        })).onComplete(done -> {
            for (final Frame f : group) {
                f.memo = Memo.I;
                evicting.remove(f.line);
                answerWaiting(f);
            }
            landed.complete();
        });
        return landed.future();
    }

    /**
     * Tests only, off unless one sets it ({@code LatchInvariants#plantLeakOnEviction}): a planted bug, the eviction of
     * a Modified frame that flushes it but forgets its release FAA, so the word keeps naming a holder whose cache no
     * longer has the line: what the reverse direction of {@link #sampleInvariants} must catch under load.
     */
    static volatile boolean plantedLeakOnEviction;

    /** The lease: frames idle for {@code leaseNs} are released, checked every half lease while any is cached. */
    private void startSweeping() {
        if (sweeping || leaseNs <= 0) {
            return;
        }
        sweeping = true;
        runtime.timers().after(leaseNs / 2).onComplete(v -> sweep());
    }

    private void sweep() {
        final long now = runtime.timers().nowNs();
        final List<Frame> expired = new ArrayList<>();
        final List<Frame> invalid = new ArrayList<>();
        for (final Frame f : frames.values()) {
            if (f.idle() && now - f.lastUsedNs >= leaseNs) {
                (f.memo == Memo.I ? invalid : expired).add(f);
            }
        }
        for (final Frame f : invalid) {
            frames.remove(f.line);
        }
        paces.values().removeIf(p -> now - p.notBeforeNs >= leaseNs);
        evict(expired);
        sweeping = false;
        if (!frames.isEmpty()) {
            startSweeping();
        }
    }
}
