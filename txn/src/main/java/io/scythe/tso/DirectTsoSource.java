package io.scythe.tso;

import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;

import java.util.function.Supplier;

/** Ranges straight from the service's counter: one RDMA FAA of {@code count} on NIC device memory. */
public final class DirectTsoSource implements TsoSource {
    private final RemoteRegion counter;
    private final Supplier<Future<RdmaChannel>> channel;

    /** @param channel this loop's one-sided channel to the TSO node */
    public DirectTsoSource(final RemoteRegion counter, final Supplier<Future<RdmaChannel>> channel) {
        this.counter = counter;
        this.channel = channel;
    }

    @Override
    public Future<Long> fetch(final int count) {
        return channel.get().compose(ch -> ch.fetchAndAdd(counter.addressOf(TsoLayout.COUNTER_OFFSET, 8),
            counter.rkey(), count));
    }

    @Override
    public String name() {
        return "direct:" + counter.node();
    }
}
