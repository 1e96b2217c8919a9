package io.scythe.tso;

import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Ranges straight from the service's counter: one RDMA FAA of {@code count} on NIC device memory.
 *
 * <p>A relocating source ({@link #relocating}) asks where the counter is on first use and asks again after a failed
 * FAA: a restarted TSO service registers a new counter region (new address and rkey) and the old queue pair died with
 * the old process, so the broken channel is dropped too. A FAA that failed added nothing it handed out, so the next
 * one, from wherever the counter now is, keeps timestamps unique. Loop-confined.
 */
public final class DirectTsoSource implements TsoSource {
    private final Supplier<Future<RemoteRegion>> locate;
    private final Supplier<Future<RdmaChannel>> channel;
    private final Consumer<RdmaChannel> broken;
    private final String name;
    private Future<RemoteRegion> counter;

    /** A source whose counter never moves (one incarnation of the service: the embedded cluster, the simulator). */
    public DirectTsoSource(final RemoteRegion counter, final Supplier<Future<RdmaChannel>> channel) {
        this(null, Future.succeededFuture(counter), channel, ch -> { }, "direct:" + counter.node());
    }

    private DirectTsoSource(final Supplier<Future<RemoteRegion>> locate, final Future<RemoteRegion> counter,
                            final Supplier<Future<RdmaChannel>> channel, final Consumer<RdmaChannel> broken,
                            final String name) {
        this.locate = locate;
        this.counter = counter;
        this.channel = channel;
        this.broken = broken;
        this.name = name;
    }

    /**
     * A source that finds the counter with {@code locate} and finds it again after a failure.
     *
     * @param channel this loop's one-sided channel to the TSO node
     * @param broken  drops a channel whose FAA failed (the next {@code channel} call connects anew)
     */
    public static DirectTsoSource relocating(final String tsoNode, final Supplier<Future<RemoteRegion>> locate,
                                             final Supplier<Future<RdmaChannel>> channel,
                                             final Consumer<RdmaChannel> broken) {
        return new DirectTsoSource(locate, null, channel, broken, "direct:" + tsoNode);
    }

    @Override
    public Future<Long> fetch(final int count) {
        if (counter == null || counter.failed()) {
            counter = locate.get();
        }
        final Future<RemoteRegion> where = counter;
        return where.compose(c -> channel.get().compose(ch -> ch.fetchAndAdd(c.addressOf(TsoLayout.COUNTER_OFFSET,
                8), c.rkey(), count)
            .onFailure(e -> {
                // Refused for now (send queue full) is flow control: the counter and the channel are fine.
                if (locate != null && !io.scythe.txn.OneSidedTxn.refusedForNow(e)) {
                    if (counter == where) {
                        counter = null;
                    }
                    broken.accept(ch);
                }
            })));
    }

    @Override
    public String name() {
        return name;
    }
}
