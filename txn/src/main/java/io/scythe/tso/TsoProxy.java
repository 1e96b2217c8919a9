package io.scythe.tso;

import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.RemoteRegion;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A TSO proxy (Scythe §4.5 (3)): serves the fetches of many compute nodes' TSO groups over RRPC, merging those that
 * arrive while its own FAA is in flight into the next FAA; so the TSO service sees one QP and a fraction of the
 * atomics. It remembers the largest timestamp it handed out and tells a restarting TSO service, which resumes above.
 * Runs on its RPC server's event loop.
 */
public final class TsoProxy {
    /** Largest count one fetch may ask. */
    public static final int MAX_FETCH = 1 << 20;

    private final String name;
    private final TsoSource upstream;
    private final List<Waiting> waiting = new ArrayList<>();
    private long waitingTotal;
    private boolean fetching;
    private long highWater;
    private long faas;
    private long served;
    private MessageConsumer<Object> highWaterConsumer;

    public TsoProxy(final String name, final RemoteRegion counter, final Supplier<Future<RdmaChannel>> channel) {
        this(name, new DirectTsoSource(counter, channel));
    }

    /** @param upstream the service's counter (a {@link DirectTsoSource}; relocating where the service may restart) */
    public TsoProxy(final String name, final TsoSource upstream) {
        this.name = name;
        this.upstream = upstream;
    }

    /** Serves {@link TsoLayout#RPC_FETCH} on {@code server} and answers high-water queries on the event bus. */
    public Future<Void> register(final Vertx vertx, final RpcServer server) {
        server.handle(TsoLayout.RPC_FETCH, (request, responder) -> {
            if (request.payloadLength() != 4) {
                responder.fail(RpcException.MALFORMED, "TSO fetch takes a u32 count");
                return;
            }
            final int count = request.payload().getInt(request.payloadOffset());
            if (count < 1 || count > MAX_FETCH) {
                responder.fail(RpcException.MALFORMED, "TSO fetch count " + count + " out of [1, " + MAX_FETCH
                    + "]");
                return;
            }
            waiting.add(new Waiting(count, responder));
            waitingTotal += count;
            if (!fetching) {
                fetch();
            }
        });
        highWaterConsumer = vertx.eventBus().consumer(TsoLayout.highWaterAddress(name),
            message -> message.reply(highWater));
        return highWaterConsumer.completion();
    }

    private void fetch() {
        // One FAA for what waits, up to what one FAA can add; the rest forms the next fetch.
        final List<Waiting> group = new ArrayList<>();
        long total = 0;
        while (!waiting.isEmpty() && total + waiting.get(0).count <= Integer.MAX_VALUE) {
            final Waiting w = waiting.remove(0);
            group.add(w);
            total += w.count;
        }
        waitingTotal -= total;
        fetching = true;
        faas++;
        upstream.fetch((int) total).onComplete(ar -> {
            if (ar.succeeded()) {
                long next = ar.result();
                for (final Waiting w : group) {
                    final UnsafeBuffer reply = new UnsafeBuffer(new byte[8]);
                    reply.putLong(0, next);
                    next += w.count;
                    highWater = next - 1;
                    served += w.count;
                    w.responder.reply(reply);
                }
            } else {
                for (final Waiting w : group) {
                    w.responder.fail(RpcException.FIRST_APPLICATION_CODE, "TSO service unreachable from proxy "
                        + name + ": " + ar.cause().getMessage());
                }
            }
            fetching = false; // only now: requests that arrived meanwhile form the next fetch
            if (!waiting.isEmpty()) {
                fetch();
            }
        });
    }

    public Future<Void> close() {
        return highWaterConsumer == null ? Future.succeededFuture() : highWaterConsumer.unregister();
    }

    public String name() {
        return name;
    }

    /** The largest timestamp this proxy handed out (0 if none). */
    public long highWater() {
        return highWater;
    }

    /** FAAs sent to the service. */
    public long faas() {
        return faas;
    }

    /** Timestamps handed out. */
    public long served() {
        return served;
    }

    private record Waiting(int count, RpcResponder responder) {
    }
}
