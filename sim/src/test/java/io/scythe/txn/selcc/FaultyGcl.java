package io.scythe.txn.selcc;

import io.vertx.core.Future;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GCL view for tests (in this package: {@link GclAllocator} is package-private): counts the handles out and fails
 * chosen latches or allocations (issue 21 review of the B-link transactions).
 */
public final class FaultyGcl implements Gcl {
    private final Gcl in;
    private final Map<Gcl.Handle, Integer> out = new IdentityHashMap<>();
    private final java.util.Set<Long> shared = new java.util.HashSet<>();
    public int failSLockIn; // fail the n-th sLock from now (0: none)
    public int failAllocateIn; // fail the n-th allocation from now (0: none)
    public boolean failXOfShared; // fail an xLock of a line this view latched Shared before (an internal node)
    public int frees;

    public FaultyGcl(final Gcl in) {
        this.in = in;
    }

    public long outstanding() {
        return out.values().stream().mapToLong(Integer::longValue).sum();
    }

    private Future<Handle> counted(final Future<Handle> f) {
        return f.map(h -> {
            out.merge(h, 1, Integer::sum);
            return h;
        });
    }

    private void gone(final Handle h) {
        out.computeIfPresent(h, (k, n) -> n == 1 ? null : n - 1);
    }

    @Override
    public GclRegion region() {
        return in.region();
    }

    @Override
    public GclAllocator allocator() {
        return in.allocator();
    }

    @Override
    public int dataBytes() {
        return in.dataBytes();
    }

    @Override
    public Future<Long> allocate() {
        if (failAllocateIn > 0 && --failAllocateIn == 0) {
            return Future.failedFuture(new IllegalStateException("injected allocation failure"));
        }
        return in.allocate();
    }

    @Override
    public void free(final Handle h) {
        frees++;
        gone(h);
        in.free(h);
    }

    @Override
    public Future<Handle> sLock(final long gaddr) {
        if (failSLockIn > 0 && --failSLockIn == 0) {
            return Future.failedFuture(new IllegalStateException("injected sLock failure"));
        }
        shared.add(gaddr);
        return counted(in.sLock(gaddr));
    }

    @Override
    public Future<Handle> xLock(final long gaddr) {
        if (failXOfShared && shared.contains(gaddr)) {
            return Future.failedFuture(new IllegalStateException("injected xLock failure"));
        }
        return counted(in.xLock(gaddr));
    }

    @Override
    public void unlock(final Handle h) {
        gone(h);
        in.unlock(h);
    }

    @Override
    public boolean writesThrough() {
        return in.writesThrough();
    }

    @Override
    public Future<Void> unlockWritten(final Handle h) {
        gone(h);
        return in.unlockWritten(h);
    }

    @Override
    public Future<Runnable> logWrites(final List<Handle> written) {
        return in.logWrites(written);
    }
}
