package io.scythe.txn.selcc;

import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;

import java.util.ArrayDeque;

/**
 * One loop's Allocate/Free (SELCC Table 1): lines come from its free list (lines it freed, still cached by it when
 * SELCC's cache kept them), else from a chunk of {@link #CHUNK} lines it took from a memory node's allocator word
 * with one RDMA FAA (memory nodes run no allocator code), memory nodes taken in turn from the participant's own. A
 * freed line's data is zeroed under its exclusive latch, so no other compute node holds a copy of it (taking X
 * invalidated them) and a stale pointer reads an empty line; its latch is released as any other (lazily in SELCC).
 * A line freed by one loop is reused by that loop only (no global free list: not in the paper).
 */
final class GclAllocator {
    /** Lines taken from a memory node at once. */
    static final int CHUNK = 32;

    private final TxnRuntime runtime;
    private final GclRegion region;
    private final ArrayDeque<Long> free = new ArrayDeque<>();
    private final boolean[] exhausted;
    private int nextNode;
    private long next;
    private long end;
    private int chunkNode;
    private Future<Void> refilling;

    GclAllocator(final TxnRuntime runtime, final GclRegion region, final int participant) {
        this.runtime = runtime;
        this.region = region;
        this.exhausted = new boolean[region.memoryNodes()];
        this.nextNode = participant % region.memoryNodes();
    }

    Future<Long> allocate() {
        if (!free.isEmpty()) {
            return Future.succeededFuture(free.pop());
        }
        if (next < end) {
            return Future.succeededFuture(region.pointer(chunkNode, next++));
        }
        if (refilling == null) {
            refilling = refill(0).andThen(done -> refilling = null);
        }
        return refilling.compose(v -> allocate());
    }

    void freed(final long gaddr) {
        free.push(gaddr);
    }

    /** Lines on this loop's free list (tests). */
    int freeLines() {
        return free.size();
    }

    private Future<Void> refill(final int tried) {
        if (tried >= exhausted.length) {
            return Future.failedFuture(new IllegalStateException("the GCL region is full: every memory node's "
                + region.lines() + " lines are allocated"));
        }
        final int mn = nextNode;
        nextNode = (nextNode + 1) % exhausted.length;
        if (exhausted[mn]) {
            return refill(tried + 1);
        }
        return runtime.channel(region.node(mn)).compose(ch -> ch.fetchAndAdd(region.headerWord(mn), region.rkey(mn),
            CHUNK)).compose(first -> {
                final long last = Math.min(region.lines(), first + CHUNK);
                if (first >= last) {
                    exhausted[mn] = true;
                    return refill(tried + 1);
                }
                chunkNode = mn;
                next = first;
                end = last;
                return Future.succeededFuture();
            });
    }
}
