package io.scythe.cluster;

import io.scythe.codec.KryoCodec;
import io.scythe.node.CoordinatorVerticle;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.util.concurrent.TimeUnit;

/**
 * A client of a Scythe cluster from any Vert.x application that joined it: sends {@link TxnRequest}s to the
 * coordinators ({@link CoordinatorVerticle#ADDRESS}, load-balanced across CNs) and says plainly what a reply means.
 * A request that gets no reply in time, or an error the coordinator could not settle, is {@link Outcome.Unknown}:
 * it may have committed. It is never reported as aborted.
 */
public final class ScytheClient implements AutoCloseable {
    public static final long DEFAULT_TIMEOUT_MS = 10_000;

    /** What happened to a transaction. */
    public sealed interface Outcome {
        /** Committed: its result and commit timestamp are in the reply. */
        record Committed(TxnReply reply) implements Outcome {
        }

        /** Aborted: it did not commit and never will (retry limit, or the procedure rolled back). */
        record Aborted(String reason) implements Outcome {
        }

        /** Refused before it ran: bad request (unknown procedure, wrong arguments), or no coordinator to take it. */
        record Rejected(String reason) implements Outcome {
        }

        /** Sent, but whether it committed is not known (no reply in time, or the coordinator failed mid-commit). */
        record Unknown(String why) implements Outcome {
        }
    }

    private final Vertx vertx;
    private final boolean owned;
    private final DeliveryOptions delivery;

    /** A client on {@code vertx}, which must be a member of the cluster. */
    public ScytheClient(final Vertx vertx, final long timeoutMs) {
        this(vertx, timeoutMs, false);
    }

    private ScytheClient(final Vertx vertx, final long timeoutMs, final boolean owned) {
        this.vertx = vertx;
        this.owned = owned;
        this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
        KryoCodec.register(vertx.eventBus(), TxnRequest.class, TxnReply.class);
    }

    /** Joins the cluster of {@code config} (its secret, members and address; its role is ignored) as a client. */
    public static ScytheClient join(final NodeConfig config, final long timeoutMs) throws Exception {
        final Vertx vertx = ClusterSetup.join(config).await(config.readyTimeoutMs(), TimeUnit.MILLISECONDS);
        return new ScytheClient(vertx, timeoutMs, true);
    }

    public Vertx vertx() {
        return vertx;
    }

    /** Runs {@code procedure} on any CN. */
    public Future<Outcome> call(final String procedure, final long... args) {
        return callAt(CoordinatorVerticle.ADDRESS, procedure, args);
    }

    /** Runs {@code procedure} on compute node {@code node}. */
    public Future<Outcome> callOn(final String node, final String procedure, final long... args) {
        return callAt(CoordinatorVerticle.ADDRESS + "." + node, procedure, args);
    }

    private Future<Outcome> callAt(final String address, final String procedure, final long[] args) {
        return vertx.eventBus().<TxnReply>request(address, new TxnRequest(procedure, args), delivery)
            .map(message -> classify(message.body()))
            .recover(e -> Future.succeededFuture(classify(e)));
    }

    static Outcome classify(final TxnReply reply) {
        if (reply.committed()) {
            return new Outcome.Committed(reply);
        }
        if (TxnReply.ABORTED.equals(reply.status())) {
            return new Outcome.Aborted(reply.reason());
        }
        if (reply.reason() != null && reply.reason().startsWith("outcome unknown")) {
            return new Outcome.Unknown(reply.reason());
        }
        return new Outcome.Rejected(reply.reason());
    }

    static Outcome classify(final Throwable failure) {
        if (failure instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
            return new Outcome.Rejected("no coordinator is serving (" + r.getMessage() + ")");
        }
        // A timeout, a lost connection, a reply that cannot be read: the request may have run.
        return new Outcome.Unknown(failure.toString());
    }

    @Override
    public void close() throws Exception {
        if (owned) {
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }
}
