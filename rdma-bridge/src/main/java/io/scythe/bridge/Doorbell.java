package io.scythe.bridge;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Arrays;

/**
 * A doorbell batch on an {@link RdmaChannel}: requests added to it are posted together, in order, with one doorbell,
 * by {@link #post()}; only the last is signaled (selective signaling), as FORD's lock-and-read batches are. The batch
 * has one Future: it completes when every request has, and then READ data is in its destination buffers and each
 * atomic's old value is in {@link #result(int)}. If a request fails, the Future fails with that request's
 * {@link VerbException} ({@link #failedIndex()} tells which); requests after it were flushed, requests before it
 * succeeded.
 *
 * <p>Build, post and read it on the channel's event loop; it is used once.
 */
public final class Doorbell {
    private final RdmaChannel channel;
    /**
     * Which requests are atomics: bit {@code i} for request {@code i < 64}, {@link #moreAtomics} beyond (made by a
     * 65th request). Bits, not an array of opcodes: a batch allocates nothing to remember its requests' kinds.
     */
    private long atomics;
    private java.util.BitSet moreAtomics;
    /** The index of the batch's first atomic, or -1; its old value is {@link #firstResult} (no array for it). */
    private int firstAtomic = -1;
    private long firstResult;
    /** The other atomics' old values by request index; made by a second atomic (most batches have one or none). */
    private long[] results;
    private int count;
    /** The channel's pooled requests while no other batch holds them, else this batch's own. */
    private WorkRequest[] requests;
    private boolean posted;
    private int failedIndex = -1;
    private VerbException failure;
    private Promise<Doorbell> promise;
    /** What {@link #post(VerbCallback)} reports to, instead of {@link #promise}. */
    private VerbCallback callback;

    Doorbell(final RdmaChannel channel) {
        this.channel = channel;
    }

    /** Adds a READ of {@code length} bytes at {@code remoteAddress} into {@code dst}; returns its index. */
    public int read(final long remoteAddress, final int rkey, final MutableDirectBuffer dst, final int dstOffset,
                    final int length) {
        next().read(remoteAddress, rkey, dst, dstOffset, length);
        return added(Opcode.READ);
    }

    public int read(final RemoteRegion region, final long offset, final MutableDirectBuffer dst,
                    final int dstOffset, final int length) {
        return read(region.addressOf(offset, length), region.rkey(), dst, dstOffset, length);
    }

    /** Adds a WRITE; {@code src} must stay unchanged until the batch completes unless it fits inline. */
    public int write(final long remoteAddress, final int rkey, final DirectBuffer src, final int srcOffset,
                     final int length) {
        next().write(remoteAddress, rkey, src, srcOffset, length).inline(length <= channel.maxInline());
        return added(Opcode.WRITE);
    }

    public int write(final RemoteRegion region, final long offset, final DirectBuffer src, final int srcOffset,
                     final int length) {
        return write(region.addressOf(offset, length), region.rkey(), src, srcOffset, length);
    }

    /** Adds an 8-byte compare-and-swap; its old value is {@link #result(int)} of the returned index. */
    public int compareAndSwap(final long remoteAddress, final int rkey, final long expected, final long desired) {
        // The result slot is fixed at post time, from the sequence number the request gets then.
        next().compareAndSwap(remoteAddress, rkey, expected, desired, channel.atomicResults(), 0);
        return added(Opcode.COMPARE_AND_SWAP);
    }

    /** Adds an 8-byte fetch-and-add; its old value is {@link #result(int)} of the returned index. */
    public int fetchAndAdd(final long remoteAddress, final int rkey, final long delta) {
        next().fetchAndAdd(remoteAddress, rkey, delta, channel.atomicResults(), 0);
        return added(Opcode.FETCH_AND_ADD);
    }

    public int send(final DirectBuffer src, final int srcOffset, final int length) {
        next().send(src, srcOffset, length).inline(length <= channel.maxInline());
        return added(Opcode.SEND);
    }

    /** Requests added so far. */
    public int size() {
        return count;
    }

    /**
     * Posts the batch with one doorbell.
     *
     * @return completes with this doorbell when every request has completed; at once when the batch is empty
     */
    public Future<Doorbell> post() {
        if (posted) {
            throw new IllegalStateException("doorbell batch already posted");
        }
        posted = true;
        if (count == 0) {
            return Future.succeededFuture(this);
        }
        promise = channel.newPromise();
        channel.submitBatch(this, requests, count);
        return promise.future();
    }

    /**
     * {@link #post()} reporting to {@code done} (value 0; the atomics' old values are {@link #result(int)}) instead of
     * a Future: called once, when the Future would have completed (before this returns when the batch is empty or
     * refused at once).
     */
    public void post(final VerbCallback done) {
        if (posted) {
            throw new IllegalStateException("doorbell batch already posted");
        }
        posted = true;
        if (count == 0) {
            VerbCallback.call(done, 0, null);
            return;
        }
        callback = done;
        channel.submitBatch(this, requests, count);
    }

    /** The old value an atomic request found; valid once the batch has completed successfully. */
    public long result(final int index) {
        if (index < 0 || index >= count || !isAtomic(index)) {
            throw new IllegalArgumentException("request " + index + " of this batch is not an atomic");
        }
        return index == firstAtomic ? firstResult : results[index];
    }

    /** Index of the request that failed, or -1. */
    public int failedIndex() {
        return failedIndex;
    }

    private boolean isAtomic(final int index) {
        return index < Long.SIZE ? (atomics & (1L << index)) != 0 : moreAtomics != null && moreAtomics.get(index);
    }

    void succeeded(final int index, final long atomicResult) {
        if (index == firstAtomic) {
            firstResult = atomicResult;
        } else if (results != null && index < results.length) {
            results[index] = atomicResult;
        }
        if (index == count - 1) {
            complete();
        }
    }

    void failed(final int index, final VerbException cause) {
        if (failure == null) {
            failure = cause;
            failedIndex = index;
        }
        if (index == count - 1) {
            complete();
        }
    }

    /** Post refused the whole batch. */
    void refused(final VerbException cause) {
        failure = cause;
        failedIndex = 0;
        complete();
    }

    private void complete() {
        if (callback != null) {
            VerbCallback.call(callback, 0, failure);
        } else if (failure == null) {
            promise.complete(this);
        } else {
            promise.fail(failure);
        }
    }

    private WorkRequest next() {
        if (posted) {
            throw new IllegalStateException("doorbell batch already posted");
        }
        if (requests == null) {
            requests = channel.borrowBatchPool(this);
        }
        if (count == requests.length) {
            requests = channel.growBatch(this, requests);
        }
        return requests[count].clear();
    }

    private int added(final Opcode opcode) {
        if (opcode.isAtomic()) {
            if (count < Long.SIZE) {
                atomics |= 1L << count;
            } else {
                if (moreAtomics == null) {
                    moreAtomics = new java.util.BitSet();
                }
                moreAtomics.set(count);
            }
            if (firstAtomic < 0) {
                firstAtomic = count;
            } else if (results == null) {
                results = new long[Math.max(8, count + 1)];
            } else if (count >= results.length) {
                results = Arrays.copyOf(results, Math.max(count + 1, results.length * 2));
            }
        }
        return count++;
    }
}
