package io.scythe.txn.scythe;

import io.scythe.txn.TxnRuntime;
import org.agrona.collections.Long2LongHashMap;

import java.util.function.LongSupplier;

/**
 * The hot-aware switch for what a TOCC attempt only reads (§4.2: the mode follows the object's contention), one per
 * event loop: the objects found locked or queued on when READ optimistically (by an OCC or a TOCC attempt), or
 * changed or queued on at a TOCC attempt's validation, less than {@link HotColdRetry#HOT_WINDOW_NS} ago. A TOCC attempt queues on the
 * Takeout Lock of such an object when it reads it, as §4.2.2 (1) says for every read; any other object it only reads
 * it READs as OCC does and validates at commit (the read-mostly objects stay OCC).
 *
 * <p>Why: the Takeout Lock has one kind of ticket (Fig. 13, 14), so a TOCC read holds the object exclusively until
 * its commit, and TOCC readers of one object serialize although none of them writes it. On TPC-C (2 warehouses, 128
 * clients, θ 0.99) most of Scythe's aborts were TOCC reads refused for timestamp order behind other readers; on
 * SmallBank the read-only Balance and WriteCheck's savings read queue behind each other the same way. The paper has
 * no shared ticket (its lock has {@code lower}, {@code upper} and {@code queued_ts} only). Without one ({@code
 * scythe:exclusive}, the paper's Scythe), a read the attempt will not write follows the object's heat: OCC while
 * reading it optimistically succeeds, TOCC's queue once it did not. With one ({@code scythe}, the default since issue
 * 22: {@link TakeoutLock#lockShared}), TOCC's read of an object hot for reads takes a shared ticket instead. An object that is written as often as read (TPC-C's warehouse row, which Payment
 * writes and NewOrder reads) aborts an optimistic read and is queued on from then on, as before.
 *
 * <p>Measured (simulator, papers' topology: {@code scythe sim --workload W --cns 1 --loops 8 --mns 3 --tso-proxies 2
 * --clients 128 --theta 0.99 --warmup 1ms --duration 10ms --seed 1 --protocols scythe --profile P}, TPC-C with
 * {@code --warehouses 2}), K txn/s against every TOCC read queued: cx5: TPC-C 18.9 to 22.5, SmallBank 572.5 to
 * 566.3, YCSB 166.3 to 164.8; cx5-pcie: TPC-C 18.4 to 22.1, SmallBank 601.2 to 615.6, YCSB 182.5 to 175.0. Learning
 * only from TOCC attempts' own aborts (not from OCC reads that found the object locked) lost more on YCSB (158.7 and
 * 167.7): its hot keys are written as often as read, so each loop's first TOCC read of each aborted. Most TOCC
 * aborts stay {@code timestamp-order} refusals of reads for update (objects the attempt writes), which this does not
 * touch.
 */
final class ReadHeat {
    /** Package-private so a test can install one on a clock of its own (its window is wall time there). */
    static final TxnRuntime.Key<ReadHeat> KEY = new TxnRuntime.Key<>("scythe-read-heat");
    /** Objects remembered; the table is forgotten wholesale when it fills (as {@link HotColdRetry}'s). */
    private static final int TRACKED_OBJECTS = 1 << 16;
    private static final long NONE = Long.MIN_VALUE;

    private final LongSupplier nowNs;
    private final Long2LongHashMap lastAbortNs = new Long2LongHashMap(NONE);
    /** Objects written after a shared read of them ({@link #writtenAfterSharedRead}), when. */
    private final Long2LongHashMap writtenAfterShared = new Long2LongHashMap(NONE);

    ReadHeat(final LongSupplier nowNs) {
        this.nowNs = nowNs;
    }

    static ReadHeat of(final TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new ReadHeat(() -> rt.timers().nowNs()));
    }

    /** An optimistic read of {@code object} found it locked or queued on, or failed validation: TOCC reads queue. */
    void aborted(final long object) {
        if (object == 0) {
            return;
        }
        if (lastAbortNs.size() >= TRACKED_OBJECTS && !lastAbortNs.containsKey(object)) {
            lastAbortNs.clear();
        }
        lastAbortNs.put(object, nowNs.getAsLong());
    }

    /**
     * A TOCC attempt wrote {@code object} after it read it with a shared ticket (which cannot be upgraded: it
     * aborted): its reads of it take exclusive tickets for {@link HotColdRetry#HOT_WINDOW_NS} from now.
     */
    void writtenAfterSharedRead(final long object) {
        if (object == 0) {
            return;
        }
        if (writtenAfterShared.size() >= TRACKED_OBJECTS && !writtenAfterShared.containsKey(object)) {
            writtenAfterShared.clear();
        }
        writtenAfterShared.put(object, nowNs.getAsLong());
    }

    /** Whether a queued TOCC read of {@code object} may take a shared ticket (not written after one lately). */
    boolean shareable(final long object) {
        final long last = writtenAfterShared.get(object);
        return last == NONE || nowNs.getAsLong() - last >= HotColdRetry.HOT_WINDOW_NS;
    }

    /** Whether a TOCC read of {@code object} queues on its Takeout Lock (it is hot for reads) or READs it as OCC. */
    boolean hot(final long object) {
        final long last = lastAbortNs.get(object);
        return last != NONE && nowNs.getAsLong() - last < HotColdRetry.HOT_WINDOW_NS;
    }
}
