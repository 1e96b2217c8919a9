package io.scythe.txn;

import io.scythe.bridge.RdmaChannel;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RrpcClient;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.tso.TimestampOracle;
import io.scythe.txn.runtime.Timers;
import io.scythe.txn.scythe.TakeoutLockClient;
import io.vertx.core.Future;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * What transactions of one event loop run on: the catalog, RRPC and one-sided channels to memory nodes, the loop's
 * TSO group, its Takeout Lock client, time. Every dependency on I/O and time comes through here (the sans-IO rule),
 * so a simulator can supply its own. Loop-confined.
 */
public final class TxnRuntime {
    private final Catalog catalog;
    private final RrpcClient rrpc;
    private final Timers timers;
    private final TimestampOracle tso;
    private final TakeoutLockClient locks;
    private final Watermarks watermarks;
    private final long idBase;
    private final Map<TableDescriptor, RemoteTable> remotes = new IdentityHashMap<>();
    private long sequence;
    private io.scythe.tso.PhysicalClockOracle physicalClock;
    /** Set from another thread between runs, read at every commit: volatile (a plain load on x86). */
    private volatile HistoryRecorder recorder;
    /** This loop's redo log, or null: commits write none (recovery cannot finish them). */
    private io.scythe.txn.recovery.RedoLog redoLog;

    /**
     * @param idBase distinguishes this loop's transaction ids from every other loop's in the cluster (a CN and loop
     *               number in the high bits); ids are never 0
     */
    public TxnRuntime(final Catalog catalog, final RrpcClient rrpc, final Timers timers, final TimestampOracle tso,
                      final Watermarks watermarks, final long idBase) {
        this.catalog = catalog;
        this.rrpc = rrpc;
        this.timers = timers;
        this.tso = tso;
        this.watermarks = watermarks;
        this.idBase = idBase;
        this.locks = new TakeoutLockClient(timers, rrpc::rocket, rrpc::oneSided);
    }

    public Catalog catalog() {
        return catalog;
    }

    public Future<RdmaChannel> channel(final String node) {
        return rrpc.oneSided(node);
    }

    /** This loop's RRPC Rocket to {@code node}. */
    public Future<io.scythe.rrpc.Rocket> rocket(final String node) {
        return rrpc.rocket(node);
    }

    /** This loop's address cache and lookups for one table partition. */
    public RemoteTable remote(final Catalog.Partition partition) {
        return remotes.computeIfAbsent(partition.descriptor(), d -> new RemoteTable(d,
            () -> rrpc.oneSided(partition.node()), () -> rrpc.rocket(partition.node())));
    }

    public Timers timers() {
        return timers;
    }

    public TimestampOracle tso() {
        return tso;
    }

    /** FaRMv2-style timestamps: this loop's physical clock with the uncertainty wait (created on first use). */
    public TimestampOracle physicalClock() {
        if (physicalClock == null) {
            physicalClock = new io.scythe.tso.PhysicalClockOracle(timers,
                io.scythe.tso.PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS, (int) ((idBase >>> 40) & 0xff));
        }
        return physicalClock;
    }

    public TakeoutLockClient locks() {
        return locks;
    }

    public Watermarks watermarks() {
        return watermarks;
    }

    /** Where committed transactions are reported, or {@code null} (the default: nothing recorded, nothing spent). */
    public HistoryRecorder recorder() {
        return recorder;
    }

    /** Starts ({@code recorder}) or stops ({@code null}) reporting this loop's committed transactions. */
    public void recorder(final HistoryRecorder recorder) {
        this.recorder = recorder;
    }

    /** Commits of this loop write redo records from now on, to log regions of {@code regionBytes} per memory node. */
    public io.scythe.txn.recovery.RedoLog enableRedoLog(final int regionBytes) {
        if (redoLog == null) {
            redoLog = new io.scythe.txn.recovery.RedoLog(rrpc::rocket, rrpc::oneSided, idBase, regionBytes);
        }
        return redoLog;
    }

    /** This loop's redo log, or {@code null} when commits write none. */
    public io.scythe.txn.recovery.RedoLog redoLog() {
        return redoLog;
    }

    /** A transaction id unique in the cluster, never 0 (0 means "free" in a CAS lock word). */
    public long nextTxnId() {
        return idBase + ++sequence;
    }
}
