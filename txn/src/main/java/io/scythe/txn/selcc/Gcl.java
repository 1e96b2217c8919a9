package io.scythe.txn.selcc;

import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;

/**
 * SELCC's API (Table 1) over one loop's view of the GCL region ({@link GclRegion}): Allocate/Free,
 * SELCC_SLock/XLock returning a handle on the local copy, SELCC_SUnlock/XUnlock. Two implementations:
 * {@link SelccGcl} (the coherent cache: the global latch kept after the unlock, released lazily) and {@link SelGcl}
 * (the SEL baseline: latched and read at every lock, written back and released at every unlock). Locks wait (they
 * are meant for index code whose latch order is deadlock-free, e.g. {@link BLinkTree}): a local conflict waits for the
 * local holder, a global one retries after the resend interval. Loop-confined, like the loop's cache.
 */
public interface Gcl {
    /** A latched line: its data (the slot's value bytes) as the local copy holds it. */
    interface Handle {
        long gaddr();

        /** The data of the local copy (length {@link Gcl#dataBytes}); written only under an exclusive handle. */
        UnsafeBuffer data();

        boolean exclusive();

        /** Records that {@code [from, from + length)} of the data was written (the dirty bounds; exclusive only). */
        void written(int from, int length);
    }

    GclRegion region();

    default int dataBytes() {
        return region().dataBytes();
    }

    /** This loop's allocator of lines in {@link #region}. */
    GclAllocator allocator();

    /** A line no one else uses (its data zero), from this loop's free list or its memory node's allocator. */
    default Future<Long> allocate() {
        return allocator().allocate();
    }

    /** Frees the line {@code h} holds exclusive: its data is zeroed, the handle unlocked, the line reusable. */
    default void free(final Handle h) {
        if (!h.exclusive()) {
            throw new IllegalArgumentException("Free needs the line latched exclusive: "
                + GlobalPointer.toString(h.gaddr()));
        }
        h.data().setMemory(0, h.data().capacity(), (byte) 0);
        h.written(0, h.data().capacity());
        unlock(h);
        allocator().freed(h.gaddr());
    }

    Future<Handle> sLock(long gaddr);

    Future<Handle> xLock(long gaddr);

    /** SUnlock / XUnlock: the local latch at once; the global one as the implementation does. */
    void unlock(Handle h);

    /**
     * Whether an exclusive line's writes reach its memory node before {@link #unlockWritten} completes (runs whose
     * compute nodes may die: package doc "B-link lines"); false: they stay in the cache until it lets the line go.
     */
    default boolean writesThrough() {
        return false;
    }

    /**
     * XUnlock of a line written under {@code h}: with {@link #writesThrough}, its dirty range is WRITten to its memory
     * node first (the latch kept meanwhile, so no other participant sees the copy before the memory node has it),
     * then unlocked; else unlocked at once. Completes once unlocked.
     */
    default Future<Void> unlockWritten(final Handle h) {
        unlock(h);
        return Future.succeededFuture();
    }

    /**
     * A recoverable run's redo record of lines latched Exclusive under {@code written} (their data as written here, not
     * yet written through): once it is durable, each line's version in the local copy is raised past the memory
     * node's and marked for the write-through, which WRITEs the version last ({@link #unlockWritten}); a survivor rolls
     * the record forward if this node dies first (each line its token's participant still holds Exclusive below that
     * version: {@link SelccRecovery#LOCK_KIND}). The result releases the record's slots: call it once every line's
     * write-through landed. Package doc "B-link transactions"; only with {@link #writesThrough}.
     */
    default Future<Runnable> logWrites(final List<Handle> written) {
        return Future.failedFuture(new UnsupportedOperationException("this GCL view writes no redo record: B-link "
            + "transactions survive a compute-node crash on SELCC's cache in recoverable runs only (issue 21)"));
    }

    /** The loop's SELCC view (coherent cache): made on first use. */
    static Gcl selcc(final TxnRuntime runtime) {
        return runtime.extension(SelccGcl.KEY, SelccGcl::new);
    }

    /** The loop's SEL view (no cache, eager release): made on first use. */
    static Gcl sel(final TxnRuntime runtime) {
        return runtime.extension(SelGcl.KEY, SelGcl::new);
    }

    /** "selcc" or "sel". */
    static Gcl of(final String kind, final TxnRuntime runtime) {
        switch (kind) {
            case "selcc":
                return selcc(runtime);
            case "sel":
                return sel(runtime);
            default:
                throw new IllegalArgumentException("unknown GCL kind '" + kind + "'; available: selcc, sel");
        }
    }
}
