package io.scythe.cli;

import io.scythe.cluster.LocalCluster;
import io.scythe.cluster.ScytheClient;
import io.scythe.cluster.ScytheNode;
import io.vertx.core.json.JsonObject;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code scythe cluster --probe}: a quick look at a fresh local cluster: throughput of a client over the event bus,
 * then how long it takes until a killed CN and a paused CN are fenced, and until each is back under a new epoch.
 * Not a benchmark (the client and every node share this host's cores).
 */
final class ClusterProbe {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ClusterProbe() {
    }

    static void run(final LocalCluster cluster, final String workload, final long accounts, final int cns)
        throws Exception {
        try (ScytheClient client = ScytheClient.join(cluster.clientConfig().access(), 10_000)) {
            closedLoop(client, workload, accounts);
            if (cns < 2) {
                System.out.println("probe: fencing needs at least 2 compute nodes; skipped");
                return;
            }
            final String killed = "cn" + (cns - 1);
            long t = System.nanoTime();
            cluster.signal(killed, "KILL");
            awaitFenced(cluster, killed + ".e1");
            System.out.printf("probe: SIGKILL %s -> fenced on mn0 after %d ms%n", killed, ms(t));
            t = System.nanoTime();
            cluster.node(killed).process().waitFor(10, TimeUnit.SECONDS);
            cluster.restart(killed, 180_000);
            System.out.printf("probe: %s restarted, ready under epoch 2 after %d ms%n", killed, ms(t));
            final String paused = "cn0";
            t = System.nanoTime();
            cluster.signal(paused, "STOP");
            awaitFenced(cluster, paused + ".e1");
            System.out.printf("probe: SIGSTOP %s -> fenced on mn0 after %d ms%n", paused, ms(t));
            t = System.nanoTime();
            cluster.signal(paused, "CONT");
            cluster.node(paused).process().waitFor(60, TimeUnit.SECONDS);
            System.out.printf("probe: SIGCONT %s -> it stopped (exit %d, lease lost) after %d ms%n", paused,
                cluster.node(paused).process().exitValue(), ms(t));
            if (cluster.node(paused).process().exitValue() == ScytheNode.EXIT_LEASE_LOST) {
                t = System.nanoTime();
                cluster.restart(paused, 180_000);
                System.out.printf("probe: %s restarted, ready under epoch 2 after %d ms%n", paused, ms(t));
            }
            closedLoop(client, workload, accounts);
        }
    }

    private static void closedLoop(final ScytheClient client, final String workload, final long accounts)
        throws InterruptedException {
        final int outstanding = 16;
        final long start = System.nanoTime();
        final long measureFrom = start + TimeUnit.SECONDS.toNanos(2);
        final long end = measureFrom + TimeUnit.SECONDS.toNanos(5);
        final AtomicLong committed = new AtomicLong();
        final AtomicLong aborted = new AtomicLong();
        final AtomicLong unknown = new AtomicLong();
        final CountDownLatch done = new CountDownLatch(outstanding);
        for (int i = 0; i < outstanding; i++) {
            final SplittableRandom random = new SplittableRandom(i);
            final Runnable[] next = new Runnable[1];
            next[0] = () -> {
                if (System.nanoTime() > end) {
                    done.countDown();
                    return;
                }
                final long a = random.nextLong(accounts);
                final long b = (a + 1 + random.nextLong(accounts - 1)) % accounts;
                final var call = workload.equals("smallbank") ? client.call("SendPayment", a, b, 1)
                    : client.call("add", a, 1);
                call.onComplete(ar -> {
                    if (System.nanoTime() > measureFrom) {
                        final ScytheClient.Outcome o = ar.result();
                        if (o instanceof ScytheClient.Outcome.Committed) {
                            committed.incrementAndGet();
                        } else if (o instanceof ScytheClient.Outcome.Aborted) {
                            aborted.incrementAndGet();
                        } else {
                            unknown.incrementAndGet();
                        }
                    }
                    next[0].run();
                });
            };
            client.vertx().runOnContext(v -> next[0].run());
        }
        done.await(60, TimeUnit.SECONDS);
        System.out.printf("probe: client over the event bus, %d outstanding, 5 s: %.0f committed/s, %d aborted, "
            + "%d unknown or rejected%n", outstanding, committed.get() / 5.0, aborted.get(), unknown.get());
    }

    private static void awaitFenced(final LocalCluster cluster, final String fabricNode) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                final String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + cluster.node("mn0").httpPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString()).body();
                if (new JsonObject(body).getJsonArray("fenced").contains(fabricNode)) {
                    return;
                }
            } catch (final java.io.IOException | RuntimeException notYet) {
                // mn0 busy: ask again
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException(fabricNode + " was not fenced within 60 s");
    }

    private static long ms(final long sinceNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNs);
    }
}
