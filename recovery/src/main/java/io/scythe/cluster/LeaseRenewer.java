package io.scythe.cluster;

import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.Nic;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A compute node's renewal of its {@link FabricLease} (the I/O around {@link FabricLease.Holder}): each
 * {@link #round} writes the incarnation's next lease word into its slot on every memory node it uses, one-sided, and
 * polls the completions, on the thread that calls it (a {@link LivenessTimer}'s, never an event loop: a busy loop must
 * not cost a node its lease), which owns the completion queue and the queue pairs. A memory node that answers a
 * renewal with {@link WcStatus#REVOKED} fenced this incarnation; a lease that ran out
 * ({@link FabricLease.Holder#lapsed}) means a memory node may fence it any moment. Both end the lease ({@code lost});
 * the renewer stops then.
 */
final class LeaseRenewer {
    private final Nic nic;
    private final FabricLease.Options options;
    private final long epoch;
    private final int offset;
    private final Supplier<Map<String, RemoteRegion>> targets;
    private final Consumer<String> lost;
    private final FabricLease.Holder holder;
    private final UnsafeBuffer word = new UnsafeBuffer(ByteBuffer.allocateDirect(FabricLease.WORD_BYTES));
    private final WorkRequest wr = new WorkRequest();
    private final Map<String, QueuePair> qps = new HashMap<>();
    /** Renewals posted and not completed yet, by work-request id: to whom, and the clock read before posting. */
    private final Map<Long, Pending> pending = new HashMap<>();
    private CompletionQueue cq;
    private long seq;
    private long nextWrId;
    private volatile boolean over;

    private record Pending(String mn, long sentNs) {
    }

    /**
     * @param targets the memory nodes to renew on now, with their {@value FabricLease#REGION} regions
     * @param lost    told once, with the reason, when the lease is lost (on the renewer's thread)
     */
    LeaseRenewer(final Nic nic, final FabricLease.Options options, final long epoch, final long slot,
                 final Supplier<Map<String, RemoteRegion>> targets, final Consumer<String> lost) {
        this.nic = nic;
        this.options = options;
        this.epoch = epoch;
        this.offset = FabricLease.offset(slot);
        this.targets = targets;
        this.lost = lost;
        this.holder = new FabricLease.Holder(options);
        holder.renewOn(targets.get().keySet(), System.nanoTime());
    }

    /** One renewal on every memory node, waiting for their acknowledgements at most a renewal period. */
    void round() {
        if (over) {
            return;
        }
        if (cq == null) {
            cq = nic.createCompletionQueue(256);
        }
        final Map<String, RemoteRegion> now = targets.get();
        holder.renewOn(now.keySet(), System.nanoTime());
        word.putLong(0, FabricLease.word(epoch, ++seq));
        for (final Map.Entry<String, RemoteRegion> t : now.entrySet()) {
            final QueuePair qp = queuePair(t.getKey());
            if (qp == null) {
                continue;
            }
            final long id = nextWrId++;
            final long sentNs = System.nanoTime(); // read before posting: a stall after it gains nothing
            wr.clear().write(t.getValue().addressOf(offset, FabricLease.WORD_BYTES), t.getValue().rkey(), word, 0,
                FabricLease.WORD_BYTES).inline(true).signaled(true).wrId(id);
            if (qp.post(wr) == QueuePair.POST_OK) {
                pending.put(id, new Pending(t.getKey(), sentNs));
            } else {
                drop(t.getKey());
            }
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.renewMs());
        while (!pending.isEmpty() && !over && System.nanoTime() - deadline < 0) {
            if (cq.poll(nic.fabric().clock().nanoTime(), this::completed, 16) == 0) {
                LockSupport.parkNanos(50_000);
            }
        }
        final String why = holder.lapsed(System.nanoTime());
        if (why != null) {
            lose(why);
        }
    }

    private void completed(final QueuePair qp, final long wrId, final Opcode opcode, final WcStatus status,
                           final int bytes) {
        final Pending p = pending.remove(wrId);
        if (p == null) {
            return;
        }
        if (status == WcStatus.SUCCESS) {
            holder.acknowledged(p.mn(), p.sentNs(), System.nanoTime());
        } else if (status == WcStatus.REVOKED) {
            lose("memory node " + p.mn() + " fenced it (its lease renewal was refused: revoked)");
        } else {
            drop(p.mn()); // connected anew next round; the lease runs out unless a renewal gets through in time
        }
    }

    private QueuePair queuePair(final String mn) {
        QueuePair qp = qps.get(mn);
        if (qp != null && !qp.connectionGone()) {
            return qp;
        }
        try {
            qp = nic.connect(mn, cq, new QpOptions().transportTimeoutMs(Math.max(1, options.leaseMs())))
                .await(options.renewMs(), TimeUnit.MILLISECONDS);
            qps.put(mn, qp);
            return qp;
        } catch (final Exception e) {
            if (String.valueOf(e.getMessage()).contains("fenced by node " + mn)) {
                lose("memory node " + mn + " fenced it (" + e.getMessage() + ")");
            }
            return null;
        }
    }

    private void drop(final String mn) {
        final QueuePair qp = qps.remove(mn);
        if (qp != null) {
            qp.close();
        }
    }

    private void lose(final String why) {
        if (!over) {
            over = true;
            lost.accept(why);
        }
    }

    /** Stops renewing (the node closes or lost its lease otherwise); the queue pairs close with the NIC. */
    void stop() {
        over = true;
    }
}
