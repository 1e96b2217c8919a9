package io.scythe.txn.scythe;

import io.scythe.txn.TxnRuntime;
import org.agrona.collections.Long2LongHashMap;

import java.util.function.LongSupplier;

/**
 * The hot-aware switch for what a TOCC attempt only reads (§4.2: the mode follows the object's contention), one per
 * event loop: the objects on which a TOCC attempt's optimistic read aborted, found locked or queued on when READ or
 * changed or queued on at validation, less than {@link HotColdRetry#HOT_WINDOW_NS} ago. A TOCC attempt queues on the
 * Takeout Lock of such an object when it reads it, as §4.2.2 (1) says for every read; any other object it only reads
 * it READs as OCC does and validates at commit (the read-mostly objects stay OCC).
 *
 * <p>Why: the Takeout Lock has one kind of ticket (Fig. 13, 14), so a TOCC read holds the object exclusively until
 * its commit, and TOCC readers of one object serialize although none of them writes it. On TPC-C (2 warehouses, 128
 * clients, θ 0.99) most of Scythe's aborts were TOCC reads refused for timestamp order behind other readers; on
 * SmallBank the read-only Balance and WriteCheck's savings read queue behind each other the same way. The paper has
 * no shared ticket (its lock has {@code lower}, {@code upper} and {@code queued_ts} only), so instead of inventing
 * one, a read the attempt will not write follows the object's heat: OCC while reading it optimistically succeeds,
 * TOCC's queue once it did not. An object that is written as often as read (TPC-C's warehouse row, which Payment
 * writes and NewOrder reads) aborts an optimistic read and is queued on from then on, as before.
 *
 * <p>Measured (simulator, papers' topology: {@code scythe sim --workload W --cns 1 --loops 8 --mns 3 --tso-proxies 2
 * --clients 128 --theta 0.99 --duration 20ms --seed 1 --protocols scythe}, TPC-C with {@code --warehouses 2}, default
 * cx5 profile), every TOCC read queued against this: TPC-C 17.05 to 21.75 K txn/s (abort rate 0.885 to 0.878, P99
 * 15.9 to 15.6 ms); SmallBank 582 to 597 K txn/s (P99 3.60 to 3.37 ms). With {@code --warmup 1ms --duration 10ms}:
 * TPC-C +17 % (cx5) and +12 % (cx5-pcie), SmallBank even (-1 %, +1 %), YCSB worse (-5 %, -8 %): its hot keys are
 * written as often as read, so the first optimistic read of each on each loop aborts (the cost of learning) and
 * a TOCC attempt that holds its write tickets then fails validation more often (validation aborts 65 to 109).
 * Most TOCC aborts stay {@code timestamp-order} refusals of reads for update (objects the attempt writes), which this
 * does not touch.
 */
final class ReadHeat {
    private static final TxnRuntime.Key<ReadHeat> KEY = new TxnRuntime.Key<>("scythe-read-heat");
    /** Objects remembered; the table is forgotten wholesale when it fills (as {@link HotColdRetry}'s). */
    private static final int TRACKED_OBJECTS = 1 << 16;
    private static final long NONE = Long.MIN_VALUE;

    private final LongSupplier nowNs;
    private final Long2LongHashMap lastAbortNs = new Long2LongHashMap(NONE);

    ReadHeat(final LongSupplier nowNs) {
        this.nowNs = nowNs;
    }

    static ReadHeat of(final TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new ReadHeat(() -> rt.timers().nowNs()));
    }

    /** A TOCC attempt's optimistic read of {@code object} aborted it: later TOCC reads of it queue. */
    void aborted(final long object) {
        if (object == 0) {
            return;
        }
        if (lastAbortNs.size() >= TRACKED_OBJECTS && !lastAbortNs.containsKey(object)) {
            lastAbortNs.clear();
        }
        lastAbortNs.put(object, nowNs.getAsLong());
    }

    /** Whether a TOCC read of {@code object} queues on its Takeout Lock (it is hot for reads) or READs it as OCC. */
    boolean hot(final long object) {
        final long last = lastAbortNs.get(object);
        return last != NONE && nowNs.getAsLong() - last < HotColdRetry.HOT_WINDOW_NS;
    }
}
