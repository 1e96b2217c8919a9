package io.scythe.node;

import io.scythe.routing.OwnershipCheck;
import io.scythe.routing.WrongOwnerException;
import io.scythe.txn.AbortException;
import io.scythe.txn.Coordinator;
import io.scythe.txn.NotServingException;
import io.scythe.txn.OutcomeUnknownException;
import io.scythe.txn.Txn;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A compute node's transaction coordinator on one event loop (DESIGN.md): takes {@link TxnRequest}s from the event
 * bus at {@link #ADDRESS} (point-to-point sends are spread over the instances, one per loop), runs the named stored
 * procedure through its loop's {@link Coordinator}, and replies with a {@link TxnReply}. A bad request is
 * {@code REJECTED} and changes nothing; the verticle keeps serving. A request routed by shard
 * ({@link TxnRequest#routed()}) to a node that does not own the shard (by its {@link OwnershipCheck}) is rejected as
 * {@code WRONG_OWNER} and runs nowhere, so that its client routes it again.
 */
public final class CoordinatorVerticle extends VerticleBase {
    public static final String ADDRESS = TxnRequest.ADDRESS;

    private final Supplier<Coordinator> coordinators;
    private final Procedures procedures;
    private final List<String> addresses;
    private final Consumer<TxnReply> observer;
    private final OwnershipCheck ownership;
    private final List<MessageConsumer<Object>> consumers = new ArrayList<>();
    private Coordinator coordinator;
    /** The event loop this instance must run on; {@code null}: wherever Vert.x puts it. */
    private io.netty.channel.EventLoop placedOn;

    /**
     * @param coordinators makes this instance's coordinator; called on its event loop at start
     */
    public CoordinatorVerticle(final Supplier<Coordinator> coordinators, final Procedures procedures,
                               final String address) {
        this(coordinators, procedures, List.of(address), null);
    }

    /**
     * @param addresses every address this instance consumes (e.g. the shared one and its node's own)
     * @param observer  sees every reply before it is sent (metrics); may be {@code null}
     */
    public CoordinatorVerticle(final Supplier<Coordinator> coordinators, final Procedures procedures,
                               final List<String> addresses, final Consumer<TxnReply> observer) {
        this(coordinators, procedures, addresses, observer, null);
    }

    /** @param ownership checks requests routed by shard; {@code null}: this node runs every request */
    public CoordinatorVerticle(final Supplier<Coordinator> coordinators, final Procedures procedures,
                               final List<String> addresses, final Consumer<TxnReply> observer,
                               final OwnershipCheck ownership) {
        this.coordinators = coordinators;
        this.procedures = procedures;
        this.addresses = List.copyOf(addresses);
        this.observer = observer;
        this.ownership = ownership;
    }

    /**
     * Registers the Kryo codecs of {@link TxnRequest} and {@link TxnReply} (and the enums a reply carries) on
     * {@code eventBus}: what a plain event-bus client of the coordinators must call once before its first request
     * (the same as {@link io.scythe.txn.api.TxnCodecs#register}, in scythe-client, which needs no server module).
     */
    public static void registerCodecs(final io.vertx.core.eventbus.EventBus eventBus) {
        io.scythe.txn.api.TxnCodecs.register(eventBus);
    }

    /**
     * Makes this instance refuse to start anywhere but on {@code loop}'s event loop (Vert.x picks a deployment's loop
     * round-robin; {@link CoordinatorDeployment} deploys again until it lands there). Checked before the coordinator
     * is made, so a misplaced instance leaves nothing behind.
     */
    CoordinatorVerticle placedOn(final io.vertx.core.Context loop) {
        placedOn = ((io.vertx.core.internal.ContextInternal) loop).nettyEventLoop();
        return this;
    }

    /** A start on another event loop than {@link #placedOn} asked for. */
    static final class MisplacedException extends IllegalStateException {
        MisplacedException(final String message) {
            super(message);
        }
    }

    @Override
    public Future<?> start() {
        if (placedOn != null && !placedOn.inEventLoop()) {
            return Future.failedFuture(new MisplacedException("started on " + Thread.currentThread().getName()
                + ", not on its event loop"));
        }
        registerCodecs(vertx.eventBus());
        coordinator = coordinators.get();
        final List<Future<Void>> registered = new ArrayList<>();
        for (final String address : addresses) {
            final MessageConsumer<Object> consumer = vertx.eventBus().consumer(address, this::onRequest);
            consumers.add(consumer);
            registered.add(consumer.completion());
        }
        return Future.all(registered);
    }

    @Override
    public Future<?> stop() {
        final List<Future<Void>> unregistered = new ArrayList<>();
        for (final MessageConsumer<Object> consumer : consumers) {
            unregistered.add(consumer.unregister());
        }
        return Future.all(unregistered);
    }

    private void reply(final Message<Object> message, final TxnReply reply) {
        if (observer != null) {
            observer.accept(reply);
        }
        message.reply(reply);
    }

    /** Hands {@code message} to this instance on its event loop, as its consumer would (for wire-level tests). */
    void deliver(final Message<Object> message) {
        context.runOnContext(ignored -> onRequest(message));
    }

    private void onRequest(final Message<Object> message) {
        final Object received;
        try {
            received = message.body(); // a clustered message is decoded here: its bytes may be anything
        } catch (final RuntimeException malformed) {
            reply(message, TxnReply.rejected(TxnReply.Rejection.MALFORMED, "malformed request: " + malformed.getMessage()));
            return;
        }
        if (!(received instanceof TxnRequest request)) {
            reply(message, TxnReply.rejected(TxnReply.Rejection.MALFORMED, "malformed request: expected a TxnRequest, got "
                + (received == null ? "nothing" : received.getClass().getSimpleName())));
            return;
        }
        if (request.routed() && ownership != null) {
            final WrongOwnerException refused = ownership.refusal(request.routingKey());
            if (refused != null) {
                reply(message, TxnReply.wrongOwner(refused.epoch(), refused.getMessage()));
                return;
            }
        }

        final Function<Txn, Future<Long>> body;
        try {
            body = procedures.bind(request.procedure(), request.args());
        } catch (final UnknownKeyException e) {
            reply(message, TxnReply.rejected(TxnReply.Rejection.UNKNOWN_PROCEDURE, e.getMessage()));
            return;
        } catch (final IllegalArgumentException e) {
            reply(message, TxnReply.rejected(TxnReply.Rejection.BAD_ARGUMENTS, e.getMessage()));
            return;
        } catch (final RuntimeException e) { // a binder's own bug: nothing ran
            reply(message, TxnReply.failed("failed, nothing committed: procedure " + request.procedure()
                + " could not be bound: " + e));
            return;
        }
        coordinator.run(body).onComplete(ar -> {
            if (ar.succeeded()) {
                final Coordinator.Outcome<Long> o = ar.result();
                reply(message, TxnReply.committed(o.result() == null ? 0 : o.result(), o.commitTs(), o.attempts(),
                    o.latencyNs(), o.mode()));
            } else if (ar.cause() instanceof AbortException abort) {
                reply(message, TxnReply.aborted(abort.reason().label(), abort.attempts(), abort.getMessage()));
            } else if (ar.cause() instanceof UnknownKeyException) {
                // A key or table its arguments named does not exist: nothing of it committed.
                reply(message, TxnReply.rejected(TxnReply.Rejection.BAD_ARGUMENTS, ar.cause().getMessage()));
            } else if (ar.cause() instanceof NotServingException) {
                // Nothing of it committed (refused, or aborted by a loop that gave up): a client may send it
                // elsewhere; never "outcome unknown".
                reply(message, TxnReply.rejected(TxnReply.Rejection.NOT_SERVING, ar.cause().getMessage()));
            } else if (ar.cause() instanceof OutcomeUnknownException) {
                // Given up past its point of no return: the redo record may be durable, recovery settles it.
                reply(message, TxnReply.unknown(ar.cause().getMessage()));
            } else {
                // Anything else failed before the point of no return (the procedure threw, a verb failed while
                // reading or locking) and the attempt was aborted: nothing of it committed.
                reply(message, TxnReply.failed("failed, nothing committed: " + ar.cause()));
            }
        });
    }
}
