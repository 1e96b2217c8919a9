package io.scythe.txn.lotus;

import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ComputeNodeContext;
import io.scythe.txn.spi.PeerMessaging;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * Lotus (lotus.md) as a protocol module ({@code lotus}): locks in compute nodes' lock tables, taken by their CPUs and
 * by lock RPCs between compute nodes, and the lock-first protocol ({@link LotusTxn}). Each compute node gets a
 * {@link LotusNode} (its lock table and lock handlers) from {@link #startComputeNode}.
 *
 * <p>Only asked for by name (not {@link #listed}) until it is complete (issue 19: what is missing is listed in the package doc's "Not implemented yet"; the Motor baseline is its own module, {@code io.scythe.txn.motor}, SR and SI). It runs in the simulator and the embedded cluster ({@code scythe bench}), which
 * wire compute-node peers and declare read-only transactions, and on cluster nodes ({@link #clusterRefusal}).
 */
public final class LotusModule implements ProtocolModule {
    /** Lotus's lock-first protocol under serializability. */
    public static final Protocol LOTUS = versioned("lotus", false);
    /** The same under snapshot isolation: no read locks for data it only reads (lotus.md §2.5). */
    public static final Protocol LOTUS_SI = versioned("lotus-si", true);

    /** A bug lotus-si can be made to run, on purpose, by a test ({@link #plant}). */
    public enum PlantedBug {
        NONE,
        /**
         * A lock-free read at T_start reads the oldest version the CVT keeps below T_start, not the newest: a stale
         * snapshot, as a stale version-table cache entry would give (a commit before T_start missed).
         */
        STALE_SNAPSHOT,
        /**
         * A key read lock-free and then written is not read again under its write lock: SI's first committer wins
         * skipped, so two transactions that read the same version both write over it (a lost update).
         */
        NO_FIRST_COMMITTER_WINS
    }

    /**
     * Whether Lotus inserts one-sided ({@code LotusTxn#insertOneSided}, the default) or by INSERT RPC (as before helper
     * lotusins; also {@code -Dscythe.lotus.oneSidedInserts=false}): for tests and comparisons, which put the default
     * back with {@link #defaultOneSidedInserts()}.
     */
    public static void oneSidedInserts(final boolean oneSided) {
        LotusTxn.oneSidedInserts = oneSided;
    }

    /** Puts {@link #oneSidedInserts(boolean)} back to its default (on unless the system property says false). */
    public static void defaultOneSidedInserts() {
        LotusTxn.oneSidedInserts = LotusTxn.oneSidedInsertsDefault();
    }

    /**
     * A test hook: lotus-si transactions begun from now on run {@code bug} (NONE: none). The explorer must catch them
     * (PlantedBugTest); a test plants one and plants NONE in a finally block. Static, as the simulator finds Lotus's
     * compute-node set-up, table formats and module by the protocol's registered name.
     */
    public static void plant(final PlantedBug bug) {
        LotusTxn.planted = java.util.Objects.requireNonNull(bug);
    }

    /**
     * Lotus on its memory-node store: each object slot gets room for the CVT and {@link Cvt#DEFAULT_VERSIONS}
     * full-record versions ({@link Cvt}).
     */
    private static Protocol versioned(final String name, final boolean si) {
        return new CvtProtocol(name, Cvt.DEFAULT_VERSIONS, si, (runtime, hint) -> new LotusTxn(runtime, si), null);
    }

    /** Lock table bytes per compute node: 1 MiB (the paper's 32 MiB, {@link LockTable#DEFAULT_BYTES},
     * would be allocated per node and run; 16K buckets hold far more locks than a simulated run holds at once). */
    public static final long LOCK_TABLE_BYTES = 1L << 20;

    @Override
    public String name() {
        return "lotus";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(LOTUS, LOTUS_SI);
    }

    @Override
    public boolean listed() {
        return false;
    }

    /**
     * It writes every backup copy (the INVISIBLE and visible writes of the CVT cells and records go to the primary and
     * each backup, {@link LotusTxn}; redo records and inserts through the shared one-sided paths), so cluster nodes run
     * it replicated by default and fail a lost memory node over to its backups (issue 19; LotusClusterProcessTest
     * compares the copies and fails a memory node over).
     */
    @Override
    public boolean replicates() {
        return true;
    }

    /**
     * Its objects carry the CAS lock word only, which its inserts take ({@code Table.InsertLock.CAS_WORD}, the word
     * FORD's and RCC's locks use); its record locks live in the compute nodes' lock tables.
     */
    @Override
    public List<io.scythe.txn.spi.HeaderWord> headerWords() {
        return List.of(io.scythe.txn.spi.HeaderWord.of("cas_lock", io.scythe.storage.ObjectLayout.CAS_LOCK_OFFSET));
    }

    /** Its locks leave nothing in objects; a key's committed value is its CVT's newest ({@link Cvt#committedValue}). */
    @Override
    public io.scythe.txn.spi.ObjectProbe probe() {
        return new io.scythe.txn.spi.ObjectProbe() {
            @Override
            public boolean locked(final io.scythe.storage.Table table, final int header) {
                return false;
            }

            /** A CVT cell left INVISIBLE ({@link Cvt#invisibleCells}). */
            @Override
            public boolean unsettled(final io.scythe.storage.Table table, final int header) {
                return Cvt.invisibleCells(table, header) > 0;
            }

            @Override
            public org.agrona.concurrent.AtomicBuffer committedValue(final io.scythe.storage.Table table,
                                                                     final int object, final long key) {
                return Cvt.committedValue(table, object, key);
            }
        };
    }

    @Override
    public List<io.scythe.txn.spi.LockKind> lockKinds() {
        return List.of(LotusLockKind.INSTANCE);
    }

    /** Lock RPCs go from loop i of a compute node to loop i of the key's lock owner (Lotus's pairing). */
    @Override
    public PeerMessaging peerMessaging(final Protocol protocol) {
        return PeerMessaging.LOOP_PAIRS;
    }

    /**
     * Cluster nodes run it: its lock RPCs go over the nodes' peers, its shards spread over the config's
     * {@code computeNodes} (fixed: no resharding across processes). A compute node that dies: calls to it fail at
     * once when its member leaves, its redo records are finished by the cluster's recovery duty, and then every
     * survivor frees the locks it held there ({@link LotusNode#peerRecovered}); a restarted node serves its shards
     * from an empty lock table.
     */
    @Override
    public String clusterRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * The simulator restarts a crashed node ({@code --crash-restart-after}): the new incarnation starts with an empty
     * lock table and cache, and serves (and renews its lease) only once its old incarnation's recovery handed its
     * shards on ({@link LotusNode#start}).
     */
    @Override
    public String restartRefusal(final io.scythe.txn.Protocol protocol) {
        return null;
    }

    /**
     * A memory node's crash in the simulator (issue 19): its backups are promoted ({@code MemoryNodeConfiguration
     * #without}); an attempt that began in the old configuration and meets it before its point of no return is
     * refused and retried (OneSidedTxn's epoch check), one past it finishes on the live copies (its write-back's
     * backups-first order keeps a version a reader saw on every copy a failover could promote, {@link LotusTxn}).
     */
    @Override
    public String memoryNodeCrashRefusal(final io.scythe.txn.Protocol protocol) {
        return null;
    }


    /**
     * A coordinator and a memory node dying together (the simulator's {@code --crash-cn} with {@code --crash-mn}): the
     * dead coordinator's records are decided by the visible cells on the copies that survive, and the visible write
     * goes to every backup before any primary ({@link LotusTxn#commit}), so a version a reader saw on a primary that
     * then died is visible on the promoted backup; an undone record's version was on no primary, so no reader saw it.
     */
    @Override
    public String combinedCrashRefusal(final io.scythe.txn.Protocol protocol, final int replicas) {
        return null;
    }

    /**
     * Its survivors' leases declare a dead node and recover its records without the host ({@link LotusCluster}), or
     * beside the host's recovery, whose log scan it then takes; no backups needed.
     */
    @Override
    public OwnCrashRecovery ownCrashRecovery(final io.scythe.txn.Protocol protocol) {
        return new OwnCrashRecovery(0, true);
    }

    /**
     * Lock-first: a commit in flight at a failover holds its keys' locks on compute nodes until its write-back
     * finished on the live copies (backups before primaries, so a promoted copy has every visible write a primary
     * had), or, its coordinator dead, until its recovery resolved it; a lock-free reader meeting its INVISIBLE cell
     * aborts or waits for the key's read lock. So nothing needs the promoted partitions blocked meanwhile. Inserts
     * neither (review finding 3): a backup's placeholder holds no lock word, so a promoted copy starts with none held;
     * an insert's key is locked on its owner CN until its commit or its coordinator's recovery resolved it (the
     * recovery settling a committed insert's home whole on the promoted copy, {@link LotusLockKind#settlePromoted});
     * the CAS words a cut INSERT or write-back left are on the dead memory node, which nothing reads. TPC-C and
     * phantom under {@code --crash-mn} (refused since helper lotusmn2 until this was shown): 50 explorer seeds each,
     * 0 failed.
     */
    @Override
    public boolean promotedCopiesServeAtOnce(final io.scythe.txn.Protocol protocol) {
        return true;
    }

    @Override
    public ComputeNodeContext.LoopSetUp startComputeNode(final ComputeNodeContext node) {
        final LotusNode lotus = new LotusNode(node, LockTable.ofBytes(LOCK_TABLE_BYTES), CriticalFields.defaults());
        return (loop, runtime, deferred) -> {
            runtime.extension(LotusNode.LOOP, r -> new LotusNode.Loop(lotus, loop, deferred));
            if (loop == 0) {
                lotus.start(runtime, deferred);
            }
        };
    }
}
