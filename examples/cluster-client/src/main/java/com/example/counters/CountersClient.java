package com.example.counters;

import io.scythe.cluster.ScytheClient;
import io.scythe.cluster.ScytheClient.Outcome;
import io.vertx.core.Future;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * A client of a Scythe cluster running the counters workload ({@code scythe cluster --workload counters}): it joins
 * with the cluster's {@code client.json}, moves amounts between counters (one transaction each: the sum of all
 * counters never changes) and says what became of each move, as every client of Scythe must:
 * <ul>
 *   <li>{@code Committed}: it happened, once.</li>
 *   <li>{@code Aborted} or {@code Rejected}: it did not happen and never will; retrying is the client's choice.</li>
 *   <li>{@code Unknown}: it may have happened. Never count it as failed: read the data (here, the sum) to find out,
 *       or make the request idempotent.</li>
 * </ul>
 *
 * <pre>java -jar scythe-example-cluster-client.jar cluster-demo/client.json 1000</pre>
 */
public final class CountersClient {
    /** What a run did: how many moves ended each way, and the sum of the counters before and after. */
    public record Report(int committed, int aborted, int rejected, int unknown, long sumBefore, long sumAfter,
                         long[] expected) {
    }

    private CountersClient() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: CountersClient CLIENT_JSON [MOVES]   (the client.json scythe cluster wrote)");
            System.exit(2);
        }
        final int moves = args.length == 2 ? Integer.parseInt(args[1]) : 1000;
        try (ScytheClient client = ScytheClient.join(Path.of(args[0]), 30_000)) {
            final Report r = run(client, 16, moves, 8);
            System.out.printf("committed %d, aborted %d, rejected %d, unknown %d; sum %d before, %d after%n",
                r.committed(), r.aborted(), r.rejected(), r.unknown(), r.sumBefore(), r.sumAfter());
            System.exit(r.sumBefore() == r.sumAfter() ? 0 : 1);
        }
    }

    /**
     * Runs {@code moves} moves between counters {@code 0..keys-1}, {@code concurrency} at a time, and reads every
     * counter before and after. {@code expected} holds each counter's value as the committed moves alone make it
     * (exact when no move ended {@link Outcome.Unknown}). Blocks the calling thread (not an event loop).
     */
    public static Report run(final ScytheClient client, final int keys, final int moves, final int concurrency)
        throws Exception {
        final long[] before = readAll(client, keys);
        final long[] expected = before.clone();
        final SplittableRandom random = new SplittableRandom(42);
        int committed = 0;
        int aborted = 0;
        int rejected = 0;
        int unknown = 0;
        for (int done = 0; done < moves; ) {
            final int batch = Math.min(concurrency, moves - done);
            final List<long[]> sent = new ArrayList<>();
            final List<Future<Outcome>> outcomes = new ArrayList<>();
            for (int i = 0; i < batch; i++) {
                final long from = random.nextInt(keys);
                final long to = (from + 1 + random.nextInt(keys - 1)) % keys;
                final long amount = 1 + random.nextInt(10);
                sent.add(new long[] {from, to, amount});
                outcomes.add(client.call("move", from, to, amount));
            }
            for (int i = 0; i < batch; i++) {
                final Outcome o = outcomes.get(i).await(60, TimeUnit.SECONDS);
                if (o instanceof Outcome.Committed) {
                    committed++;
                    expected[(int) sent.get(i)[0]] -= sent.get(i)[2];
                    expected[(int) sent.get(i)[1]] += sent.get(i)[2];
                } else if (o instanceof Outcome.Aborted) {
                    aborted++;
                } else if (o instanceof Outcome.Rejected) {
                    rejected++;
                } else {
                    unknown++; // may have happened: only the data can tell
                }
            }
            done += batch;
        }
        final long[] after = readAll(client, keys);
        return new Report(committed, aborted, rejected, unknown, sum(before), sum(after),
            unknown == 0 ? expected : null);
    }

    /** Every counter, each read by its own transaction (retried until it commits). */
    public static long[] readAll(final ScytheClient client, final int keys) throws Exception {
        final long[] values = new long[keys];
        for (int k = 0; k < keys; k++) {
            for (int attempt = 0; ; attempt++) {
                final Outcome o = client.call("get", k).await(60, TimeUnit.SECONDS);
                if (o instanceof Outcome.Committed c) {
                    values[k] = c.reply().result();
                    break;
                }
                if (attempt == 100) {
                    throw new IllegalStateException("could not read counter " + k + ": " + o);
                }
            }
        }
        return values;
    }

    private static long sum(final long[] values) {
        long s = 0;
        for (final long v : values) {
            s += v;
        }
        return s;
    }
}
