package io.scythe.tso;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * The TSO service of Scythe §4.5 (1): a counter in the NIC device memory of its node, advanced by the FAAs of TSO
 * groups and proxies with no CPU involved. On start it asks every issuer it was configured with (proxies, and groups
 * that fetch directly) for the largest timestamp each handed out, and starts its counter above all of them: a
 * restarted service never hands a timestamp out twice. It will not start while an issuer does not answer, rather than
 * risk it. It says where the counter is at {@link TsoLayout#whereAddress}.
 */
public final class TsoService {
    private final Vertx vertx;
    private final Nic nic;
    private final List<String> issuers;
    private final long timeoutMs;
    private MemoryRegion counter;
    private MessageConsumer<Object> where;
    private long startedAt;

    public TsoService(final Vertx vertx, final Nic nic, final List<String> issuers, final long timeoutMs) {
        this.vertx = vertx;
        this.nic = nic;
        this.issuers = List.copyOf(issuers);
        this.timeoutMs = timeoutMs;
    }

    /** Learns the issuers' high water, then opens the counter just above it. */
    public Future<RemoteRegion> start() {
        final List<Future<Long>> reports = new ArrayList<>();
        for (final String issuer : issuers) {
            reports.add(vertx.eventBus().<Long>request(TsoLayout.highWaterAddress(issuer), "",
                    new DeliveryOptions().setSendTimeout(timeoutMs))
                .map(reply -> reply.body())
                .recover(e -> Future.failedFuture(new IllegalStateException("TSO service on " + nic.node()
                    + " cannot start: issuer " + issuer + " did not report the largest timestamp it handed out ("
                    + e.getMessage() + "); starting could hand a timestamp out twice", e))));
        }
        return Future.all(reports).compose(all -> {
            long high = 0;
            for (final Future<Long> report : reports) {
                high = Math.max(high, report.result());
            }
            startedAt = high + 1;
            counter = nic.register(TsoLayout.REGION, TsoLayout.REGION_BYTES, MemoryKind.DEVICE);
            counter.buffer().putLongVolatile(TsoLayout.COUNTER_OFFSET, startedAt);
            final RemoteRegion described = counter.describe();
            where = vertx.eventBus().consumer(TsoLayout.whereAddress(nic.node()), message -> message.reply(
                new JsonObject().put("node", described.node()).put("address", described.address())
                    .put("length", described.length()).put("rkey", described.rkey())));
            return where.completion().map(described);
        });
    }

    /** The first timestamp this incarnation hands out. */
    public long startedAt() {
        return startedAt;
    }

    /** The counter's current value: the next timestamp. */
    public long peek() {
        return counter.buffer().getLongVolatile(TsoLayout.COUNTER_OFFSET);
    }

    public Future<Void> stop() {
        final Future<Void> unregistered = where == null ? Future.succeededFuture() : where.unregister();
        if (counter != null && counter.isRegistered()) {
            nic.deregister(counter);
        }
        return unregistered;
    }

    /** Asks the TSO service on {@code node} where its counter is. */
    public static Future<RemoteRegion> locate(final Vertx vertx, final String node, final long timeoutMs) {
        return vertx.eventBus().<JsonObject>request(TsoLayout.whereAddress(node), "",
                new DeliveryOptions().setSendTimeout(timeoutMs))
            .map(reply -> {
                final JsonObject json = reply.body();
                return new RemoteRegion(json.getString("node"), TsoLayout.REGION, json.getLong("address"),
                    json.getLong("length"), json.getInteger("rkey"), MemoryKind.DEVICE);
            });
    }
}
