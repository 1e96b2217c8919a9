package io.scythe.txn.runtime;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bridge.Bridge;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;

import java.util.PriorityQueue;

/**
 * Microsecond timers of one event loop, polled by its {@link Bridge} like a coroutine scheduler checks its sleepers:
 * Vert.x timers tick in milliseconds, while a Takeout Lock's hangout or TOCC's 20 us deferral is microseconds. The
 * bridge keeps polling while a timer is pending; a timer added to a quiet loop wakes its bridge. A long wait
 * ({@link #afterIdle}) does not keep it polling: the bridge sleeps until it is due ({@link #wakeAtNs}) when nothing
 * else keeps it polling (in the simulator one timer event instead of a poll every poll interval). Loop-confined.
 */
public final class LoopTimers implements Timers, Bridge.Poller {
    private static final FastThreadLocal<LoopTimers> CURRENT = new FastThreadLocal<>();

    private final Bridge bridge;
    private final PriorityQueue<Sleeper> sleepers = new PriorityQueue<>();
    /** Long waits ({@link #afterIdle}): polled like the others, but the bridge is not kept polling for them. */
    private final PriorityQueue<Sleeper> idle = new PriorityQueue<>();
    private long sequence;

    private LoopTimers(final Bridge bridge) {
        this.bridge = bridge;
        bridge.addPoller(this);
    }

    /** The timers of the calling event loop (created with its bridge's poller on first use). */
    public static LoopTimers current() {
        LoopTimers timers = CURRENT.getIfExists();
        if (timers == null) {
            timers = new LoopTimers(Bridge.current());
            CURRENT.set(timers);
        }
        return timers;
    }

    /**
     * Timers polled by {@code bridge}, for a loop that is not a thread of its own (the simulator runs many simulated
     * loops on one thread, so {@link #current()} would mix them up).
     */
    public static LoopTimers on(final Bridge bridge) {
        return new LoopTimers(bridge);
    }

    @Override
    public long nowNs() {
        return bridge.clock().nanoTime();
    }

    @Override
    public Future<Void> after(final long delayNs) {
        return sleep(sleepers, delayNs);
    }

    @Override
    public Future<Void> afterIdle(final long delayNs) {
        return sleep(idle, delayNs);
    }

    private Future<Void> sleep(final PriorityQueue<Sleeper> queue, final long delayNs) {
        if (delayNs <= 0) {
            return Future.succeededFuture();
        }
        final ContextInternal context = (ContextInternal) Vertx.currentContext();
        final Promise<Void> promise = context != null ? context.promise() : Promise.promise();
        queue.add(new Sleeper(nowNs() + delayNs, sequence++, promise));
        // A quiet bridge polls nobody: tell it we are busy now; after a long wait, its next duty cycle learns when.
        if (queue == idle || sleepers.size() == 1) {
            bridge.wake();
        }
        return promise.future();
    }

    @Override
    public int poll(final long nowNs) {
        // The two queues' due sleepers in one order, (until, sequence), as one queue would give them (review: draining
        // one queue, then the other, fired an idle sleeper due earlier after a busy one due later).
        int done = 0;
        while (true) {
            final Sleeper busy = dueHead(sleepers, nowNs);
            final Sleeper quiet = dueHead(idle, nowNs);
            if (busy == null && quiet == null) {
                return done;
            }
            final boolean busyFirst = quiet == null || busy != null && busy.compareTo(quiet) < 0;
            (busyFirst ? sleepers : idle).poll();
            (busyFirst ? busy : quiet).promise.complete();
            done++;
        }
    }

    private static Sleeper dueHead(final PriorityQueue<Sleeper> queue, final long nowNs) {
        final Sleeper s = queue.peek();
        return s != null && s.until - nowNs <= 0 ? s : null;
    }

    @Override
    public long wakeAtNs() {
        final Sleeper s = idle.peek();
        return s == null ? io.scythe.fabric.CompletionQueue.NO_EVENT : s.until;
    }

    @Override
    public boolean busy() {
        return !sleepers.isEmpty();
    }

    public int pending() {
        return sleepers.size() + idle.size();
    }

    private record Sleeper(long until, long sequence, Promise<Void> promise) implements Comparable<Sleeper> {
        @Override
        public int compareTo(final Sleeper o) {
            final int byTime = Long.compare(until - o.until, 0);
            return byTime != 0 ? byTime : Long.compare(sequence, o.sequence);
        }
    }
}
