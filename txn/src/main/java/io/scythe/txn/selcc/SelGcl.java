package io.scythe.txn.selcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The SEL baseline's API (no cache, eager release): SLock is FAA {@code +bit} with the line's READ in one doorbell
 * (undone by FAA {@code -bit} when an exclusive holder shows, then tried again), XLock is CAS {@code 0 -> (p, 0)}
 * with the READ (tried again while it fails), SUnlock is FAA {@code -bit}, XUnlock the WRITE of the dirty range then
 * FAA {@code -(p, 0)} in one doorbell. A loop's flows share its reader bit and the copy read with it (one entry per
 * line in use); a flow that needs the line otherwise waits for the local holders, or for the verb in flight.
 */
final class SelGcl implements Gcl {
    static final TxnRuntime.Key<SelGcl> KEY = new TxnRuntime.Key<>("sel-gcl");
    /** Pause before a global latch is tried again (SEL spins on the latch word with its verbs). */
    static final long RETRY_NS = 2_000L;

    private final TxnRuntime runtime;
    private final GclRegion region;
    private final GclAllocator allocator;
    private final int me;
    /** A redo log on this loop (compute nodes may die): {@link #writesThrough}. */
    private final boolean recoverable;
    private final Map<Long, Entry> lines = new HashMap<>();

    /** One line in use by this loop. */
    private static final class Entry {
        final long gaddr;
        final UnsafeBuffer image;
        /** Local holders: Shared count, or 1 with {@link #exclusive}. */
        int holders;
        boolean exclusive;
        long dirty = DirtyBounds.CLEAN;
        /** Its header (the version a redo record raised) is to be WRITten with the XUnlock, after the data. */
        boolean headerDirty;
        /** A global verb of it is in flight, or null. */
        Future<Void> busy;
        List<Promise<Void>> waiters;
        /** Flows waiting to latch it Exclusive: new Shared takers wait behind them. */
        int writersWaiting;

        Entry(final long gaddr, final int lineBytes) {
            this.gaddr = gaddr;
            this.image = new UnsafeBuffer(new byte[lineBytes]);
        }
    }

    SelGcl(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.region = GclRegion.of(runtime.catalog());
        this.me = Participants.of(runtime);
        this.allocator = new GclAllocator(runtime, region, me);
        this.recoverable = io.scythe.txn.recovery.RedoLog.of(runtime) != null;
    }

    /**
     * Recoverable runs: SEL's XUnlock already WRITEs the line before its release FAA, in one doorbell; {@link
     * #unlockWritten} then completes only once that doorbell did, so a split's new node is on its memory node before
     * the node it split links it (package doc "B-link lines"), and an acknowledged write is on its memory node.
     */
    @Override
    public boolean writesThrough() {
        return recoverable;
    }

    @Override
    public Future<Void> unlockWritten(final Handle h) {
        final Future<Void> released = release(h);
        return writesThrough() ? released : Future.succeededFuture();
    }

    /** {@link LineHandle#logWrites}: a line is held Exclusive while its entry is; its XUnlock WRITEs the version. */
    @Override
    public Future<Runnable> logWrites(final List<Handle> written) {
        return LineHandle.logWrites(runtime, region, me, written, h -> ((EntryHandle) h).line().exclusive,
            h -> ((EntryHandle) h).line().headerDirty = true);
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
        final Entry e = lines.computeIfAbsent(gaddr, g -> new Entry(g, region.lineBytes()));
        if (e.busy != null) {
            return e.busy.transform(v -> sLock(gaddr));
        }
        if (e.exclusive || e.writersWaiting > 0) {
            return waitLocal(e).compose(v -> sLock(gaddr));
        }
        if (e.holders > 0) {
            e.holders++;
            return runtime.timers().after(1).map(v -> new EntryHandle(e, false, region.dataBytes()));
        }
        return busy(e, acquire(e, false)).transform(done -> done.failed() ? Future.failedFuture(done.cause())
            : done.result() ? Future.succeededFuture(new EntryHandle(e, false, region.dataBytes()))
            : runtime.timers().after(RETRY_NS).compose(v -> sLock(gaddr)));
    }

    @Override
    public Future<Handle> xLock(final long gaddr) {
        final Entry e = lines.computeIfAbsent(gaddr, g -> new Entry(g, region.lineBytes()));
        if (e.busy != null) {
            return e.busy.transform(v -> xLock(gaddr));
        }
        if (e.holders > 0) {
            e.writersWaiting++;
            return waitLocal(e).compose(v -> {
                e.writersWaiting--;
                return xLock(gaddr);
            });
        }
        return busy(e, acquire(e, true)).transform(done -> done.failed() ? Future.failedFuture(done.cause())
            : done.result() ? Future.succeededFuture(new EntryHandle(e, true, region.dataBytes()))
            : runtime.timers().after(RETRY_NS).compose(v -> xLock(gaddr)));
    }

    /** One try at the global latch with the READ: whether it was taken (the entry then holds it for the caller). */
    private Future<Boolean> acquire(final Entry e, final boolean x) {
        final Future<Boolean> notYet = SelccModule.notYet(runtime); // a restarted node before its barrier (issue 21)
        if (notYet != null) {
            return notYet;
        }
        final long address = region.address(e.gaddr);
        final int rkey = region.rkey(e.gaddr);
        final long latch = address + ObjectLayout.PROTOCOL_WORD_OFFSET;
        return runtime.channel(region.node(e.gaddr)).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int atomic = x ? batch.compareAndSwap(latch, rkey, LatchWord.FREE, LatchWord.exclusive(me))
                : batch.fetchAndAdd(latch, rkey, LatchWord.share(me));
            batch.read(address, rkey, e.image, 0, region.lineBytes());
            return batch.post().compose(b -> {
                final long previous = b.result(atomic);
                if (x) {
                    return Future.succeededFuture(previous == LatchWord.FREE);
                }
                if (LatchWord.holder(previous) == 0) {
                    return Future.succeededFuture(true);
                }
                return ch.fetchAndAdd(latch, rkey, LatchWord.unshare(me)).map(false); // an X holder: undo
            });
        }).map(taken -> {
            if (taken) {
                e.holders = 1;
                e.exclusive = x;
                e.dirty = DirtyBounds.CLEAN;
            }
            return taken;
        });
    }

    private <T> Future<T> busy(final Entry e, final Future<T> step) {
        final Future<T> done = step.andThen(v -> {
            e.busy = null;
            if (e.holders == 0) {
                forget(e);
            }
            wake(e);
        });
        if (!done.isComplete()) {
            e.busy = done.mapEmpty();
        }
        return done;
    }

    private Future<Void> waitLocal(final Entry e) {
        final Promise<Void> p = Promise.promise();
        if (e.waiters == null) {
            e.waiters = new ArrayList<>(2);
        }
        e.waiters.add(p);
        return p.future();
    }

    private static void wake(final Entry e) {
        if (e.waiters != null) {
            final List<Promise<Void>> woken = e.waiters;
            e.waiters = null;
            for (final Promise<Void> p : woken) {
                p.complete();
            }
        }
    }

    private void forget(final Entry e) {
        if (e.holders == 0 && e.busy == null && e.waiters == null && e.writersWaiting == 0
            && lines.get(e.gaddr) == e) {
            lines.remove(e.gaddr);
        }
    }

    @Override
    public void unlock(final Handle h) {
        release(h);
    }

    /**
     * The unlock: the local latch at once; the last local holder's global release (an exclusive one's dirty data and
     * header WRITten first, version last, in the release's doorbell). Completes once that doorbell did (at once while
     * other local holders remain); a failed release gives the loop up.
     */
    private Future<Void> release(final Handle h) {
        final Entry e = ((EntryHandle) h).release();
        if (--e.holders > 0) {
            return Future.succeededFuture();
        }
        final long address = region.address(e.gaddr);
        final int rkey = region.rkey(e.gaddr);
        final boolean x = e.exclusive;
        final long dirty = e.dirty;
        final boolean header = e.headerDirty;
        e.exclusive = false;
        e.dirty = DirtyBounds.CLEAN;
        e.headerDirty = false;
        return busy(e, runtime.channel(region.node(e.gaddr)).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            if (x && dirty != DirtyBounds.CLEAN) {
                final int from = ObjectLayout.VALUE_OFFSET + DirtyBounds.lower(dirty);
                batch.write(address + from, rkey, e.image, from, DirtyBounds.length(dirty));
            }
            if (x && header) {
                LineCache.addHeaderFlush(batch, address, rkey, e.image);
            }
            batch.fetchAndAdd(address + ObjectLayout.PROTOCOL_WORD_OFFSET, rkey, x ? LatchWord.unexclusive(me)
                : LatchWord.unshare(me));
            return batch.post();
        })).<Void>mapEmpty().onFailure(err -> runtime.giveUp("sel: releasing " + GlobalPointer.toString(e.gaddr)
            + " failed: " + err));
    }

    /** A handle on an entry's copy. */
    private static final class EntryHandle extends LineHandle<Entry> {
        EntryHandle(final Entry entry, final boolean exclusive, final int dataBytes) {
            super(entry.gaddr, entry, exclusive, entry.image, dataBytes);
        }

        @Override
        void widen(final Entry entry, final int from, final int length) {
            entry.dirty = DirtyBounds.widen(entry.dirty, from, length);
        }
    }
}
