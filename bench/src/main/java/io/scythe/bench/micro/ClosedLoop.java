package io.scythe.bench.micro;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Closed-loop clients, the papers' threads x coroutines: each client issues one operation, waits for it, and issues
 * the next, until the run ends. Clients are spread over the given event-loop contexts; latency is measured per
 * operation, from issue to completion.
 */
final class ClosedLoop {
    /** What a run measured. */
    record Result(long completed, long failed, long elapsedNs, Histogram latencyNs) {
        double perSecond() {
            return completed * 1e9 / elapsedNs;
        }
    }

    private ClosedLoop() {
    }

    /**
     * Runs {@code clients} clients, warm-up first (not measured). {@code operation} is called on the client's loop.
     * Blocks the calling thread, which must not be an event loop.
     */
    static Result run(final List<Context> loops, final int clients, final long warmupMs, final long durationMs,
                      final Supplier<Future<?>> operation) throws Exception {
        if (warmupMs > 0) {
            runOnce(loops, clients, warmupMs, operation);
        }
        return runOnce(loops, clients, durationMs, operation);
    }

    private static Result runOnce(final List<Context> loops, final int clients, final long durationMs,
                                  final Supplier<Future<?>> operation) throws Exception {
        final List<Future<Result>> parts = new ArrayList<>();
        final long start = System.nanoTime();
        final long deadline = start + TimeUnit.MILLISECONDS.toNanos(durationMs);
        for (int l = 0; l < loops.size(); l++) {
            final int share = clients / loops.size() + (l < clients % loops.size() ? 1 : 0);
            if (share == 0) {
                continue;
            }
            final Promise<Result> promise = Promise.promise();
            loops.get(l).runOnContext(v -> new Loop(share, deadline, operation, promise).start());
            parts.add(promise.future());
        }
        long completed = 0;
        long failed = 0;
        final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        for (final Future<Result> part : parts) {
            final Result r = part.await(durationMs + 120_000, TimeUnit.MILLISECONDS);
            completed += r.completed;
            failed += r.failed;
            latency.add(r.latencyNs);
        }
        return new Result(completed, failed, System.nanoTime() - start, latency);
    }

    /** The clients of one event loop. */
    private static final class Loop {
        private final int clients;
        private final long deadline;
        private final Supplier<Future<?>> operation;
        private final Promise<Result> done;
        private final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        private long completed;
        private long failed;
        private int running;

        Loop(final int clients, final long deadline, final Supplier<Future<?>> operation,
             final Promise<Result> done) {
            this.clients = clients;
            this.deadline = deadline;
            this.operation = operation;
            this.done = done;
        }

        void start() {
            running = clients;
            for (int c = 0; c < clients; c++) {
                next();
            }
        }

        /** Issues operations until one has to wait (a loop, not recursion: an operation may complete at once). */
        private void next() {
            while (true) {
                final long issued = System.nanoTime();
                if (issued - deadline >= 0) {
                    if (--running == 0) {
                        done.complete(new Result(completed, failed, 0, latency));
                    }
                    return;
                }
                final Future<?> op;
                try {
                    op = operation.get();
                } catch (final RuntimeException e) {
                    failed++;
                    continue;
                }
                if (!op.isComplete()) {
                    op.onComplete(ar -> {
                        record(ar.succeeded(), issued);
                        next();
                    });
                    return;
                }
                record(op.succeeded(), issued);
            }
        }

        private void record(final boolean ok, final long issued) {
            if (ok) {
                completed++;
                latency.recordValue(System.nanoTime() - issued);
            } else {
                failed++;
            }
        }
    }
}
