package io.scythe.txn.selcc;

import io.scythe.txn.AbortException;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.LineCache.Frame;
import io.scythe.txn.selcc.LineCache.Memo;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SELCC's API on the loop's coherent cache ({@link LineCache}): SLock takes the frame's local latch Shared, after a
 * global Shared acquisition when the memo is I; XLock takes it Exclusive, after a global Exclusive acquisition (or
 * the S to X upgrade) when the memo is not M; an unlock frees the local latch only (the global latch stays, memo M or
 * S, until an invalidation, an eviction, the idle lease or the fairness lease γ lets it go). A hit costs no verb but
 * is charged as a task of the loop (as {@link SelccTxn}'s). A local conflict waits for the local holder's unlock; a
 * global acquisition that gave up (the holder's frame stayed in use) is tried again after the resend interval.
 */
final class SelccGcl implements Gcl {
    static final io.scythe.txn.TxnRuntime.Key<SelccGcl> KEY = new io.scythe.txn.TxnRuntime.Key<>("selcc-gcl");

    private final TxnRuntime runtime;
    private final LineCache cache;
    private final GclRegion region;
    private final GclAllocator allocator;
    private final long retryNs = SelccModule.resendNs();
    /** Flows waiting for a frame's local latch, woken at its unlock. */
    private final Map<Frame, List<Promise<Void>>> waiters = new HashMap<>();
    /** Flows waiting to latch a frame Exclusive: new Shared takers wait behind them (no writer starves locally). */
    private final Map<Frame, Integer> writersWaiting = new HashMap<>();

    SelccGcl(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.cache = LineCache.of(runtime);
        this.region = GclRegion.of(runtime.catalog());
        this.allocator = new GclAllocator(runtime, region, cache.participant());
    }

    @Override
    public GclRegion region() {
        return region;
    }

    @Override
    public GclAllocator allocator() {
        return allocator;
    }

    @Override
    public Future<Handle> sLock(final long gaddr) {
        return lock(gaddr, false, false);
    }

    @Override
    public Future<Handle> xLock(final long gaddr) {
        return lock(gaddr, true, false);
    }

    private Future<Handle> lock(final long gaddr, final boolean x, final boolean charged) {
        return lock(gaddr, x, charged, false);
    }

    /** {@code missed}: a global step was taken for this lock already (a miss: not counted as a cache hit). */
    private Future<Handle> lock(final long gaddr, final boolean x, final boolean charged, final boolean missed) {
        final String node = region.node(gaddr);
        final long address = region.address(gaddr);
        final Frame f = cache.frame(node, address, region.rkey(gaddr), region.lineBytes());
        if (f == null) {
            return cache.evicted(node, address).compose(v -> lock(gaddr, x, charged, missed));
        }
        if (f.busy) {
            return cache.settled(f).compose(v -> lock(gaddr, x, charged, missed));
        }
        if (x && !f.idle()) {
            writersWaiting.merge(f, 1, Integer::sum);
            return localRelease(f).compose(v -> {
                writersWaiting.computeIfPresent(f, (k, n) -> n == 1 ? null : n - 1);
                return lock(gaddr, x, charged, missed);
            });
        }
        if (!x && (f.writer || writersWaiting.containsKey(f))) {
            return localRelease(f).compose(v -> lock(gaddr, x, charged, missed));
        }
        if (f.wanted && f.sinceWanted >= cache.gamma()) { // the fairness lease ran out: let the line go first
            if (f.idle()) {
                cache.yieldIfDue(f);
                return cache.evicted(node, address).compose(v -> lock(gaddr, x, charged, missed));
            }
            return localRelease(f).compose(v -> lock(gaddr, x, charged, missed));
        }
        if (x ? f.memo == Memo.M : f.memo != Memo.I) {
            if (!charged) {
                return runtime.timers().after(1).compose(v -> lock(gaddr, x, true, missed));
            }
            if (!missed) {
                LineCache.hit();
            }
            return Future.succeededFuture(take(gaddr, f, x));
        }
        final Future<Void> global = !x ? cache.acquireShared(f, true)
            : f.memo == Memo.S ? cache.upgrade(f, true) : cache.acquireExclusive(f, true);
        return global.transform(done -> {
            if (done.failed()) {
                cache.forgetIfInvalid(f);
                if (done.cause() instanceof AbortException && !SelccModule.awaitingOwnRecovery(runtime)) {
                    // In use there all along: try again. Not while this restarted node's barrier is shut (the
                    // abort is its gate's, SelccModule#notYet): that may take seconds, and spinning on timers
                    // meanwhile helps nobody; the caller's transaction aborts and its coordinator backs off.
                    return runtime.timers().after(retryNs).compose(v -> lock(gaddr, x, true, true));
                }
                return Future.failedFuture(done.cause());
            }
            // Another flow of this loop may have taken the local latch while the global step landed.
            return lock(gaddr, x, true, true);
        });
    }

    private Handle take(final long gaddr, final Frame f, final boolean x) {
        if (x) {
            f.writer = true;
        } else {
            f.readers++;
        }
        if (f.wanted) {
            f.sinceWanted++;
        }
        cache.used(f);
        return new FrameHandle(gaddr, f, x, region.dataBytes());
    }

    /** Recoverable runs (a redo log: compute nodes may die) write tree lines through, as commits write tables. */
    @Override
    public boolean writesThrough() {
        return cache.recoverable();
    }

    @Override
    public Future<Void> unlockWritten(final Handle h) {
        final Frame f = ((FrameHandle) h).frame();
        if (!writesThrough() || !h.exclusive() || !f.headerDirty && f.dirty == DirtyBounds.CLEAN) {
            unlock(h);
            return Future.succeededFuture();
        }
        return cache.writeThrough(List.of(f)).map(v -> {
            unlock(h);
            return null;
        });
    }

    /** {@link LineHandle#logWrites}: a line is held Exclusive while its frame's memo is M. */
    @Override
    public Future<Runnable> logWrites(final List<Handle> written) {
        return LineHandle.logWrites(runtime, region, cache.participant(), written,
            h -> ((FrameHandle) h).frame().memo == Memo.M, h -> ((FrameHandle) h).frame().headerDirty = true);
    }

    /** Completes at the next unlock of {@code f} by a flow of this loop. */
    private Future<Void> localRelease(final Frame f) {
        final Promise<Void> p = Promise.promise();
        waiters.computeIfAbsent(f, k -> new ArrayList<>(2)).add(p);
        return p.future();
    }

    @Override
    public void unlock(final Handle h) {
        final Frame f = ((FrameHandle) h).release();
        if (h.exclusive()) {
            f.writer = false;
        } else {
            f.readers--;
        }
        cache.used(f);
        cache.localReleased(f);
        cache.yieldIfDue(f);
        final List<Promise<Void>> woken = waiters.remove(f);
        cache.forgetIfInvalid(f);
        if (woken != null) {
            for (final Promise<Void> p : woken) {
                p.complete();
            }
        }
    }

    /** A handle on a frame's copy: the data is the slot's value bytes of the frame's image. */
    private static final class FrameHandle extends LineHandle<Frame> {
        FrameHandle(final long gaddr, final Frame frame, final boolean exclusive, final int dataBytes) {
            super(gaddr, frame, exclusive, frame.image, dataBytes);
            this.frame = frame;
        }

        private final Frame frame;

        Frame frame() {
            return frame;
        }

        @Override
        void widen(final Frame frame, final int from, final int length) {
            frame.dirty = DirtyBounds.widen(frame.dirty, from, length);
        }
    }
}
