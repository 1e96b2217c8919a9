package io.scythe.tso;

import io.scythe.bridge.Bridge;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import org.agrona.concurrent.NanoClock;

import java.util.ArrayDeque;

/**
 * FaRMv2-style timestamps from synchronised physical clocks (Scythe §3.3 (1)): the timestamp is the clock reading,
 * and the request waits out the clock uncertainty before it may use it, so that a later request anywhere reads a
 * larger clock. The paper reports 22-24 us of uncertainty wait. Readings are made unique per event loop by the loop's
 * id in the low bits. Loop-confined; the wait is polled by the loop's bridge, never a blocking sleep.
 */
public final class PhysicalClockOracle implements TimestampOracle, Bridge.Poller {
    /** Uncertainty wait of FaRMv2 reported by Scythe §3.3 (1): 22-24 us. */
    public static final long DEFAULT_UNCERTAINTY_NS = 22_000;
    private static final int LOOP_BITS = 8;

    private final NanoClock clock;
    private final long uncertaintyNs;
    private final int loopId;
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private final Bridge bridge;
    private long last;

    public PhysicalClockOracle(final NanoClock clock, final long uncertaintyNs, final int loopId, final Bridge bridge) {
        if (loopId < 0 || loopId >= 1 << LOOP_BITS) {
            throw new IllegalArgumentException("loopId=" + loopId + " must be within [0, 256)");
        }
        this.clock = clock;
        this.uncertaintyNs = uncertaintyNs;
        this.loopId = loopId;
        this.bridge = bridge;
        bridge.addPoller(this);
    }

    @Override
    public Future<Long> next() {
        final long now = clock.nanoTime();
        final long ts = Math.max(last + (1 << LOOP_BITS), (now << LOOP_BITS) | loopId);
        last = ts;
        final ContextInternal context = (ContextInternal) Vertx.currentContext();
        final Promise<Long> promise = context != null ? context.promise() : Promise.promise();
        waiting.add(new Waiting(now + uncertaintyNs, ts, promise));
        if (waiting.size() == 1) {
            bridge.wake(); // an idle bridge polls no one; it must learn that we are busy now
        }
        return promise.future();
    }

    @Override
    public int poll(final long nowNs) {
        int done = 0;
        while (!waiting.isEmpty() && waiting.peek().until - nowNs <= 0) {
            final Waiting w = waiting.poll();
            w.promise.complete(w.ts);
            done++;
        }
        return done;
    }

    @Override
    public boolean busy() {
        return !waiting.isEmpty();
    }

    @Override
    public String name() {
        return "physical-clock";
    }

    private record Waiting(long until, long ts, Promise<Long> promise) {
    }
}
