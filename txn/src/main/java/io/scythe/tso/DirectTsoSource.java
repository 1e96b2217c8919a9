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
 * one, from wherever the counter now is, keeps timestamps unique. Its FAA has a time limit: a service that went
 * silent (paused, cut off) leaves nothing to fail, and the group must go on to another source; a late answer is a
 * range nobody uses, a gap. Loop-confined.
 */
public final class DirectTsoSource implements TsoSource {
    private final Supplier<Future<RemoteRegion>> locate;
    private final Supplier<Future<RdmaChannel>> channel;
    private final Consumer<RdmaChannel> broken;
    private final String tsoNode;
    private final long timeoutMs;
    private Future<RemoteRegion> counter;

    /** A source whose counter never moves (one incarnation of the service: the embedded cluster, the simulator). */
    public DirectTsoSource(final RemoteRegion counter, final Supplier<Future<RdmaChannel>> channel) {
        this(null, Future.succeededFuture(counter), channel, ch -> { }, counter.node(), 0);
    }

    private DirectTsoSource(final Supplier<Future<RemoteRegion>> locate, final Future<RemoteRegion> counter,
                            final Supplier<Future<RdmaChannel>> channel, final Consumer<RdmaChannel> broken,
                            final String tsoNode, final long timeoutMs) {
        this.locate = locate;
        this.counter = counter;
        this.channel = channel;
        this.broken = broken;
        this.tsoNode = tsoNode;
        this.timeoutMs = timeoutMs;
    }

    /**
     * A source that finds the counter with {@code locate} and finds it again after a failure.
     *
     * @param channel this loop's one-sided channel to the TSO node
     * @param broken  drops a channel whose FAA failed (the next {@code channel} call connects anew)
     * @param timeoutMs how long locating, connecting and the FAA may take together before the fetch fails
     */
    public static DirectTsoSource relocating(final String tsoNode, final Supplier<Future<RemoteRegion>> locate,
                                             final Supplier<Future<RdmaChannel>> channel,
                                             final Consumer<RdmaChannel> broken, final long timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("timeoutMs=" + timeoutMs + " must be positive");
        }
        return new DirectTsoSource(locate, null, channel, broken, tsoNode, timeoutMs);
    }

    @Override
    public Future<Long> fetch(final int count) {
        if (counter == null || counter.failed()) {
            counter = locate.get();
        }
        final Future<RemoteRegion> where = counter;
        final Future<RdmaChannel> connected = where.compose(c -> channel.get());
        final Future<Long> faa = connected.compose(ch -> ch.fetchAndAdd(where.result().addressOf(
            TsoLayout.COUNTER_OFFSET, 8), where.result().rkey(), count));
        if (locate == null) {
            return faa;
        }
        return Deadline.within(faa, timeoutMs, () -> "TSO counter on " + tsoNode)
            .onFailure(e -> {
                // Refused for now (send queue full) is flow control: the counter and the channel are fine.
                if (io.scythe.txn.Refusal.forNow(e)) {
                    return;
                }
                if (counter == where) {
                    counter = null; // located again on the next fetch: the service may have restarted
                }
                if (connected.succeeded()) {
                    broken.accept(connected.result());
                }
            });
    }

    @Override
    public String name() {
        return "direct:" + tsoNode;
    }
}
