package io.scythe.txn.onesided;

import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.List;

/**
 * One loop's spare heap buffers of accesses' images and new values (issue 22: an image and a new value per access
 * were a third of the bytes a commit allocated), by capacity. An attempt takes its accesses' buffers here
 * ({@link #take}, zeroed: what a new array holds) and gives them back once it committed with no read in flight
 * ({@link #recycle}): from then on nothing reads them (a transaction's reads return copies, and its history, redo record
 * and write-back are done with them), so the next attempt's accesses get them. An aborted attempt's buffers are not
 * given back (its late releases and reads may still touch its accesses): they are garbage as before. Loop-confined.
 */
public final class BufferPool {
    /** Spare buffers kept per capacity; more are dropped (garbage, as without a pool). */
    static final int MAX_SPARE_PER_CAPACITY = 256;
    private static final TxnRuntime.Key<BufferPool> KEY = new TxnRuntime.Key<>("onesided-buffer-pool");

    private final Int2ObjectHashMap<ArrayDeque<UnsafeBuffer>> spare = new Int2ObjectHashMap<>();

    /** This loop's pool. */
    public static BufferPool of(final TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new BufferPool());
    }

    /** A buffer over a heap array of {@code capacity} bytes, all zero: a spare one if there is one, else a new one. */
    public UnsafeBuffer take(final int capacity) {
        final ArrayDeque<UnsafeBuffer> free = spare.get(capacity);
        if (free == null || free.isEmpty()) {
            return new UnsafeBuffer(new byte[capacity]);
        }
        final UnsafeBuffer b = free.pop();
        b.setMemory(0, capacity, (byte) 0); // nothing of the attempt that had it shows through
        return b;
    }

    /** Keeps {@code b} (one {@link #take} lent, referenced by nothing live any more) to lend again. */
    void give(final UnsafeBuffer b) {
        final int capacity = b.capacity();
        ArrayDeque<UnsafeBuffer> free = spare.get(capacity);
        if (free == null) {
            free = new ArrayDeque<>();
            spare.put(capacity, free);
        }
        if (free.size() < MAX_SPARE_PER_CAPACITY) {
            free.push(b);
        }
    }

    /** How many spare buffers of {@code capacity} bytes it holds (for tests). */
    int spare(final int capacity) {
        final ArrayDeque<UnsafeBuffer> free = spare.get(capacity);
        return free == null ? 0 : free.size();
    }

    /**
     * Gives back the buffers of {@code accesses} that this pool lent and that they still hold (a protocol that put
     * another buffer in their place keeps both out of the pool), and clears the accesses' hold on them: a use of an
     * image or new value after this fails loudly (null) rather than reading another attempt's bytes, and a write-back
     * after it (none happens) would quietly go back to a buffer per verb ({@code WriteSet.addWrites}, writeWords null).
     * Only for an attempt that is over, committed, with no read in flight ({@link ReadSet#recycle}'s guard).
     */
    void recycle(final List<Access> accesses) {
        for (int i = 0; i < accesses.size(); i++) { // indexed: no iterator on the hot path
            final Access a = accesses.get(i);
            if (a.pooledImage != null) {
                if (a.image == a.pooledImage) {
                    a.image = null;
                    give(a.pooledImage);
                }
                a.pooledImage = null;
            }
            if (a.pooledNewValue != null) {
                if (a.newValue == a.pooledNewValue) {
                    a.newValue = null;
                    give(a.pooledNewValue);
                }
                a.pooledNewValue = null;
            }
            if (a.writeWords != null) { // only ever lent by the pool
                give(a.writeWords);
                a.writeWords = null;
            }
        }
    }
}
