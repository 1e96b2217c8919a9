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

    /**
     * Told how a run goes, about once a second, on the thread that called {@link #run}: completed and failed
     * operations and the latencies of the completed ones so far (a copy, the caller's to keep).
     */
    interface Progress {
        void update(long elapsedNs, long completed, long failed, Histogram latencyNs);
    }

    /** How often {@link Progress} hears of a run. */
    static final long PROGRESS_INTERVAL_MS = 1_000;

    private ClosedLoop() {
    }

    /**
     * Runs {@code clients} clients, warm-up first (not measured). {@code operation} is called on the client's loop.
     * Blocks the calling thread, which must not be an event loop.
     */
    static Result run(final List<Context> loops, final int clients, final long warmupMs, final long durationMs,
                      final Supplier<Future<?>> operation) throws Exception {
        return run(loops, clients, warmupMs, durationMs, operation, null);
    }

    /** As {@link #run(List, int, long, long, Supplier)}, telling {@code progress} (if not null) how the run goes. */
    static Result run(final List<Context> loops, final int clients, final long warmupMs, final long durationMs,
                      final Supplier<Future<?>> operation, final Progress progress) throws Exception {
        return runClients(loops, clients, warmupMs, durationMs, () -> operation, progress);
    }

    /**
     * As {@link #run(List, int, long, long, Supplier, Progress)} with clients that keep state of their own: each
     * client's operation is {@code clientOperations}' answer, asked once per client on the client's loop as it starts
     * (so it may take the loop's own objects), in the warm-up and again in the measured run.
     */
    static Result runClients(final List<Context> loops, final int clients, final long warmupMs, final long durationMs,
                             final Supplier<Supplier<Future<?>>> clientOperations, final Progress progress)
        throws Exception {
        if (warmupMs > 0) {
            runOnce(loops, clients, warmupMs, clientOperations, null);
        }
        return runOnce(loops, clients, durationMs, clientOperations, progress);
    }

    private static Result runOnce(final List<Context> loops, final int clients, final long durationMs,
                                  final Supplier<Supplier<Future<?>>> operation, final Progress progress)
        throws Exception {
        final List<Future<Result>> parts = new ArrayList<>();
        final List<Loop> started = new ArrayList<>();
        final List<Context> startedOn = new ArrayList<>();
        final long start = System.nanoTime();
        final long deadline = start + TimeUnit.MILLISECONDS.toNanos(durationMs);
        for (int l = 0; l < loops.size(); l++) {
            final int share = clients / loops.size() + (l < clients % loops.size() ? 1 : 0);
            if (share == 0) {
                continue;
            }
            final Promise<Result> promise = Promise.promise();
            final Loop loop = new Loop(share, deadline, operation, promise);
            loops.get(l).runOnContext(v -> loop.start());
            started.add(loop);
            startedOn.add(loops.get(l));
            parts.add(promise.future());
        }
        if (progress != null) {
            reportProgress(startedOn, started, parts, start, progress);
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

    /** Until every part is done: once a second, each loop's counts and latencies, copied on that loop. */
    private static void reportProgress(final List<Context> loops, final List<Loop> started,
                                       final List<Future<Result>> parts, final long start, final Progress progress)
        throws Exception {
        final Future<?> all = Future.all(parts);
        long next = start + TimeUnit.MILLISECONDS.toNanos(PROGRESS_INTERVAL_MS);
        while (!all.isComplete()) {
            final long waitNs = next - System.nanoTime();
            if (waitNs > 0) {
                try {
                    all.await(waitNs, TimeUnit.NANOSECONDS);
                } catch (final java.util.concurrent.TimeoutException e) {
                    // the next report is due
                }
                if (all.isComplete()) {
                    return;
                }
            }
            next += TimeUnit.MILLISECONDS.toNanos(PROGRESS_INTERVAL_MS);
            final Histogram latency = new Histogram(3_600_000_000_000L, 3);
            long completed = 0;
            long failed = 0;
            for (int i = 0; i < started.size(); i++) {
                final Loop loop = started.get(i);
                final Promise<Result> copied = Promise.promise();
                loops.get(i).runOnContext(v -> copied.complete(loop.snapshot()));
                final Result r = copied.future().await(10, TimeUnit.SECONDS);
                completed += r.completed;
                failed += r.failed;
                latency.add(r.latencyNs);
            }
            progress.update(System.nanoTime() - start, completed, failed, latency);
        }
    }

    /** The clients of one event loop. */
    private static final class Loop {
        private final int clients;
        private final long deadline;
        /** Each client's operation, asked as it starts. */
        private final Supplier<Supplier<Future<?>>> operation;
        private final Promise<Result> done;
        private final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        private long completed;
        private long failed;
        private int running;

        Loop(final int clients, final long deadline, final Supplier<Supplier<Future<?>>> operation,
             final Promise<Result> done) {
            this.clients = clients;
            this.deadline = deadline;
            this.operation = operation;
            this.done = done;
        }

        /** Counts and latencies so far (call on the loop). */
        Result snapshot() {
            return new Result(completed, failed, 0, latency.copy());
        }

        void start() {
            running = clients;
            for (int c = 0; c < clients; c++) {
                new Client(operation.get()).next();
            }
        }

        /**
         * One client: the listener of its operation in flight, kept for the next (one object per client, not a
         * lambda per operation).
         */
        private final class Client implements io.vertx.core.Completable<Object> {
            /** When the operation in flight was issued. */
            private long issued;
            /** This client's operation. */
            private final Supplier<Future<?>> operation;

            Client(final Supplier<Future<?>> operation) {
                this.operation = operation;
            }

            /** Issues operations until one has to wait (a loop, not recursion: an operation may complete at once). */
            @SuppressWarnings("unchecked")
            void next() {
                while (true) {
                    issued = System.nanoTime();
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
                        ((Future<Object>) op).onComplete(this);
                        return;
                    }
                    record(op.succeeded(), issued);
                }
            }

            @Override
            public void complete(final Object result, final Throwable failure) {
                record(failure == null, issued);
                next();
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
