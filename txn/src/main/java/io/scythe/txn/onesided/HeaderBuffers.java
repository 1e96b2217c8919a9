package io.scythe.txn.onesided;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.TxnRuntime;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;

/**
 * One loop's reusable destinations of the header READs validation posts ({@link ReadSet#checkHeader}) and of the
 * header READ in a commit-time CAS lock's doorbell ({@code CasLockTxn#lockForCommit}), a {@link TxnRuntime#extension}
 * (loop-confined, no lock). Release point: a buffer is taken when its READ is built and given back by the completion
 * callback of its READ (or doorbell batch) once the step that reads it ran, failed or not: the NIC writes a READ's
 * destination only before its completion, and nothing keeps the buffer past the check. At most {@link #KEPT}
 * buffers are kept; more in flight at once are made and dropped.
 */
public final class HeaderBuffers {
    static final TxnRuntime.Key<HeaderBuffers> KEY = new TxnRuntime.Key<>("header-buffers");
    private static final int KEPT = 64;
    private final ArrayDeque<UnsafeBuffer> free = new ArrayDeque<>();

    public static HeaderBuffers of(final TxnRuntime runtime) {
        return runtime.extension(KEY, r -> new HeaderBuffers());
    }

    public UnsafeBuffer take() {
        final UnsafeBuffer kept = free.pollLast();
        return kept != null ? kept : new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
    }

    public void giveBack(final UnsafeBuffer header) {
        if (free.size() < KEPT) {
            free.addLast(header);
        }
    }
}
