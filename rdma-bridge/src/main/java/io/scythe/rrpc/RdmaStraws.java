package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.Nic;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.vertx.core.Future;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The RPC queue pairs from this node to one remote node, shared by the Rockets of every event loop (Scythe §4.6 (1)):
 * rings are decoupled from QPs, so fewer QPs than Rockets can serve them and the remote NIC caches fewer QP
 * contexts. A QP is added when the Rockets per QP exceed {@link RrpcOptions#rocketsPerQp()} (up to
 * {@link RrpcOptions#maxQpsPerStraw()}) and released when Rockets leave. One-sided verbs use separate, per-loop QPs
 * ({@link RrpcClient#oneSided}), so bulk READs never queue behind RPC batches.
 */
public final class RdmaStraws implements CompletionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaStraws.class);

    private final Nic nic;
    private final String remote;
    private final RrpcOptions options;
    private final List<QueuePair> qps = new ArrayList<>();
    private final List<Rocket> rockets = new CopyOnWriteArrayList<>();
    private Future<QueuePair> connecting;

    RdmaStraws(final Nic nic, final String remote, final RrpcOptions options) {
        this.nic = nic;
        this.remote = remote;
        this.options = options;
    }

    /**
     * A QP for {@code rocket}, adding one (owned by the calling loop's bridge, shared with every loop) when the
     * Rockets per QP exceed the threshold.
     */
    synchronized Future<QueuePair> attach(final Rocket rocket, final Bridge bridge) {
        rockets.add(rocket);
        final int wanted = Math.min(options.maxQpsPerStraw(),
            (rockets.size() + options.rocketsPerQp() - 1) / options.rocketsPerQp());
        if (qps.size() < wanted && connecting == null) {
            final Future<QueuePair> attempt = nic.connect(remote, bridge.completionQueue(nic),
                new QpOptions().shared(true).sendQueueDepth(8192));
            // Set before the handler is added: a provider may have completed it already, and then the handler runs
            // at once (were the field set after, it would keep a finished attempt and no one would connect again).
            connecting = attempt;
            attempt.onComplete(ar -> {
                synchronized (RdmaStraws.this) {
                    if (connecting == attempt) {
                        connecting = null;
                    }
                    if (ar.succeeded()) {
                        ar.result().attachment(RdmaStraws.this);
                        qps.add(ar.result());
                    }
                }
            });
            final int index = rockets.size() - 1;
            return attempt.map(qp -> pick(index));
        }
        if (connecting != null) {
            final int index = rockets.size() - 1;
            return connecting.transform(ar -> qps.isEmpty() ? Future.failedFuture(ar.failed() ? ar.cause()
                : new IllegalStateException("RRPC queue pair to " + remote + " failed right after it connected"))
                : Future.succeededFuture(pick(index)));
        }
        return Future.succeededFuture(pick(rockets.size() - 1));
    }

    private synchronized QueuePair pick(final int index) {
        return qps.get(index % qps.size());
    }

    /** Releases {@code rocket}; closes QPs beyond what the remaining Rockets need. */
    synchronized void detach(final Rocket rocket) {
        rockets.remove(rocket);
        final int wanted = Math.max(rockets.isEmpty() ? 0 : 1,
            (rockets.size() + options.rocketsPerQp() - 1) / options.rocketsPerQp());
        while (qps.size() > wanted) {
            final QueuePair qp = qps.remove(qps.size() - 1);
            boolean inUse = false;
            for (final Rocket r : rockets) {
                inUse |= r.queuePair() == qp;
            }
            if (inUse) {
                qps.add(qp);
                break;
            }
            qp.close();
        }
    }

    /** Queue pairs open now (for tests and metrics). */
    public synchronized int size() {
        return qps.size();
    }

    public String remote() {
        return remote;
    }

    @Override
    public void onCompletion(final QueuePair qp, final long wrId, final Opcode opcode, final WcStatus status,
                             final int byteLength) {
        if (status == WcStatus.SUCCESS) {
            return;
        }
        LOG.warn("RRPC queue pair to " + remote + " failed: " + status + "; its Rockets are cut off");
        synchronized (this) {
            qps.remove(qp);
        }
        for (final Rocket rocket : rockets) {
            if (rocket.queuePair() == qp) {
                rocket.disconnected(status);
            }
        }
        if (qp.state() != QpState.REVOKED) {
            qp.close();
        }
    }
}
