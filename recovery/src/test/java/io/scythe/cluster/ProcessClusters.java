package io.scythe.cluster;

import static org.assertj.core.api.Assertions.assertThat;

/** What every test that runs a {@link LocalCluster} of processes does at the end, even when it failed. */
final class ProcessClusters {
    private ProcessClusters() {
    }

    /**
     * A cluster of the counters workload (64 keys) over shm with the zero cost model, protocol scythe, its node JVMs
     * small and quick to start; nothing started yet.
     */
    static LocalCluster counters(final String prefix, final int mns, final int cns, final int proxies,
                                 final java.nio.file.Path dir) throws java.io.IOException {
        return counters(prefix, mns, cns, proxies, dir, java.util.List.of());
    }

    /** The same, each node JVM also started with {@code jvmOptions} (e.g. enabling fault points). */
    static LocalCluster counters(final String prefix, final int mns, final int cns, final int proxies,
                                 final java.nio.file.Path dir, final java.util.List<String> jvmOptions)
        throws java.io.IOException {
        return counters(prefix, mns, cns, proxies, dir, jvmOptions, "shm");
    }

    /** The same over the fabric {@code provider} ({@code shm} or {@code tcp}). */
    static LocalCluster counters(final String prefix, final int mns, final int cns, final int proxies,
                                 final java.nio.file.Path dir, final java.util.List<String> jvmOptions,
                                 final String provider) throws java.io.IOException {
        final java.util.List<String> options = new java.util.ArrayList<>(java.util.List.of("-Xmx256m",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        options.addAll(jvmOptions);
        return new LocalCluster(prefix + java.util.UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", mns, cns, proxies,
            new io.vertx.core.json.JsonObject().put("name", "counters").put("keys", 64),
            new io.vertx.core.json.JsonObject().put("provider", provider).put("costModel",
                new io.vertx.core.json.JsonObject().put("profile", "zero")),
            "scythe", dir, LocalCluster.Launcher.sameClasspath(options));
    }

    /**
     * On a thread of its own: waits (up to 60 s) until compute node {@code cn} serves ({@code serves}, asked only while
     * it runs) or has exited, and starts an exited one again (within {@code restartTimeoutMs}). Completes with whether
     * it was restarted. A test runs it beside the checks that need not this CN, or for several CNs at once: a restart
     * under load takes tens of seconds (a JVM boot and a Hazelcast join), most of it waiting.
     */
    static java.util.concurrent.CompletableFuture<Boolean> servingOrRestarted(final LocalCluster cluster,
        final String cn, final java.util.function.BooleanSupplier serves, final long restartTimeoutMs) {
        final java.util.concurrent.CompletableFuture<Boolean> back = new java.util.concurrent.CompletableFuture<>();
        final Thread t = new Thread(() -> {
            try {
                eventually(cn + " serves or has exited", 60_000,
                    () -> !cluster.node(cn).process().isAlive() || serves.getAsBoolean());
                final boolean exited = !cluster.node(cn).process().isAlive();
                if (exited) {
                    cluster.restart(cn, restartTimeoutMs);
                }
                back.complete(exited);
            } catch (final Throwable e) {
                back.completeExceptionally(e);
            }
        }, cn + " serving or restarted");
        t.setDaemon(true);
        t.start();
        return back;
    }

    /**
     * Starts {@code cluster} (within {@code startTimeoutMs}) and joins it as a client whose requests time out after
     * {@code replyTimeoutMs}: the client joins once the TSO is ready, beside the memory and compute nodes' boot (it
     * learns the compute nodes from the registry's events as they register). Prints how long each took (what the
     * suite's time is read from, issue 23 §1). A client that joined although the start failed is closed.
     */
    static ScytheClient startAndJoin(final LocalCluster cluster, final long startTimeoutMs, final long replyTimeoutMs)
        throws Exception {
        final long t0 = System.nanoTime();
        final java.util.concurrent.CompletableFuture<ScytheClient> joining = new java.util.concurrent
            .CompletableFuture<>();
        final long[] joinMs = new long[1];
        try {
            cluster.start(startTimeoutMs, () -> {
                final Thread join = new Thread(() -> {
                    final long j0 = System.nanoTime();
                    try {
                        final ScytheClient c = ScytheClient.join(cluster.clientConfig().access(), replyTimeoutMs);
                        joinMs[0] = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - j0);
                        joining.complete(c);
                    } catch (final Throwable e) {
                        joining.completeExceptionally(e);
                    }
                }, "client join of " + cluster.cluster());
                join.setDaemon(true);
                join.start();
            });
        } catch (final Exception e) {
            joining.thenAccept(ProcessClusters::closeQuietly);
            throw e;
        }
        final long t1 = System.nanoTime();
        final ScytheClient client;
        try {
            client = joining.get(startTimeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (final java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("the client could not join cluster " + cluster.cluster(), e.getCause());
        } catch (final java.util.concurrent.TimeoutException e) {
            joining.thenAccept(ProcessClusters::closeQuietly); // joins later: closed then, not left in this JVM
            throw e;
        }
        System.out.println("cluster of " + cluster.nodes().size() + " nodes started in "
            + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(t1 - t0) + " ms (tiers " + cluster.tierStartMs()
            + " ms); the client joined (a lite member, beside the MNs' and CNs' boot) in " + joinMs[0] + " ms, "
            + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1) + " ms after the start");
        return client;
    }

    private static void closeQuietly(final ScytheClient client) {
        try {
            client.close();
        } catch (final Exception e) {
            System.err.println("closing a client of a cluster that did not start: " + e);
        }
    }

    /**
     * Closes {@code client} and stops {@code cluster}, prints every node's log (what a failure is read from), and
     * checks that no node process is left and the cluster's shm files are gone.
     */
    static void stop(final ScytheClient client, final LocalCluster cluster) throws Exception {
        final long t0 = System.nanoTime();
        long clientMs = 0;
        try {
            if (client != null) {
                client.close();
            }
            clientMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        } finally {
            if (cluster != null) {
                killAllButTheArchiveDumper(cluster);
                cluster.close();
                System.out.println("client closed in " + clientMs + " ms, cluster stopped in "
                    + (java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) - clientMs) + " ms");
                for (final LocalCluster.Node n : cluster.nodes().values()) {
                    System.out.println("---- log of " + n.name() + "\n" + n.logText());
                }
                assertThat(cluster.shmDirectory()).doesNotExist();
                for (final LocalCluster.Node n : cluster.nodes().values()) {
                    assertThat(n.process() == null || !n.process().isAlive()).as(n.name()).isTrue();
                }
            }
        }
    }

    /**
     * SIGKILLs every node process of {@code cluster} still running except the one writing the node class archive at
     * exit ({@link NodeClassArchive#dumps}: it needs a clean exit), which {@link LocalCluster#close} then stops with
     * SIGTERM and waits for. A test's cluster ends with the test: its nodes' graceful leave (each member leaving
     * Hazelcast while the others leave too) took 4.3-7.6 s per cluster (CI 130 and here), with nothing checked of it;
     * the shm files a killed node leaves are removed by {@code close} either way.
     */
    static void killAllButTheArchiveDumper(final LocalCluster cluster) throws InterruptedException {
        final java.util.List<Process> killed = new java.util.ArrayList<>();
        for (final LocalCluster.Node n : cluster.nodes().values()) {
            final Process p = n.process();
            if (p != null && p.isAlive() && !NodeClassArchive.dumps(p)) {
                p.destroyForcibly(); // SIGKILL: ends a SIGSTOPped process too
                killed.add(p);
            }
        }
        for (final Process p : killed) {
            p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** Waits (polling every 50 ms) until {@code condition} holds; fails naming {@code what} after {@code timeoutMs}. */
    static void eventually(final String what, final long timeoutMs, final java.util.function.BooleanSupplier condition)
        throws InterruptedException {
        eventually(what, timeoutMs, Long.MAX_VALUE, condition);
    }

    /**
     * As {@link #eventually(String, long, java.util.function.BooleanSupplier)}, also taking the nodes' threads once
     * the wait has lasted {@code snapshotAfterMs} ({@link ProcessLogsOnFailure#snapshot}: shown only if the test fails):
     * a wedge seen while it lasts, not only at the bound, when the nodes may have come out of it (issue 23 §1).
     */
    static void eventually(final String what, final long timeoutMs, final long snapshotAfterMs,
                           final java.util.function.BooleanSupplier condition) throws InterruptedException {
        final long start = System.nanoTime();
        final long deadline = start + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        boolean snapshot = snapshotAfterMs < timeoutMs;
        while (!condition.getAsBoolean()) {
            if (snapshot && System.nanoTime() - start > java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                snapshotAfterMs)) {
                snapshot = false;
                ProcessLogsOnFailure.snapshot("still waiting after " + snapshotAfterMs + " ms: " + what);
            }
            if (System.nanoTime() > deadline) {
                // The nodes' threads now, before the test's clean-up wakes or restarts any (issue 23 §1).
                ProcessLogsOnFailure.snapshot("not within " + timeoutMs + " ms: " + what);
                throw new AssertionError("not within " + timeoutMs + " ms: " + what);
            }
            Thread.sleep(50);
        }
    }

    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

    /**
     * The body of {@code GET path} on {@code node}'s HTTP port (its /health, /copies); a read not answered within 30 s
     * fails (Java's client waits forever by default: a hung read would outlast every bound around it unseen).
     */
    static String get(final LocalCluster cluster, final String node, final String path) throws Exception {
        return HTTP.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
            + cluster.node(node).httpPort() + path)).timeout(java.time.Duration.ofSeconds(30)).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * The attempts {@code node}'s coordinators aborted for {@code reason} (its /metrics' {@code scythe_aborts_total}
     * of that label, summed over its other tags), or -1 when it did not answer.
     */
    static long aborts(final LocalCluster cluster, final String node, final String reason) {
        final String metrics;
        try {
            metrics = get(cluster, node, "/metrics");
        } catch (final Exception e) {
            return -1;
        }
        double n = 0;
        for (final String line : metrics.split("\n")) {
            if (line.startsWith("scythe_aborts_total{") && line.contains("reason=\"" + reason + "\"")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) n;
    }

    /**
     * The objects locked or queued on and the Takeout tickets outstanding, summed over memory nodes {@code mns} (their
     * /health), or -1 when one did not answer.
     */
    static long locksHeld(final LocalCluster cluster, final java.util.List<String> mns) {
        long held = 0;
        for (final String mn : mns) {
            try {
                final io.vertx.core.json.JsonObject h = new io.vertx.core.json.JsonObject(get(cluster, mn, "/health"));
                held += h.getLong("locksHeld", 0L) + h.getLong("ticketsOutstanding", 0L);
            } catch (final Exception e) {
                return -1;
            }
        }
        return held;
    }

    /**
     * {@code count} moves over keys 0-15 (seeded by {@code seed}) sent at once, alternately to cn0 and cn1: each must
     * end committed or aborted, never unknown; the committed ones are applied to {@code expected} and the abort
     * reasons added to {@code abortReasons}. Returns how many committed on cn0 and on cn1.
     */
    static int[] concurrentMoves(final ScytheClient client, final long seed, final int count, final long[] expected,
                                 final java.util.Set<String> abortReasons) throws Exception {
        final java.util.Random random = new java.util.Random(seed);
        final java.util.List<long[]> moves = new java.util.ArrayList<>();
        final java.util.List<io.vertx.core.Future<ScytheClient.Outcome>> outcomes = new java.util.ArrayList<>();
        final long[] tookMs = new long[count];
        for (int i = 0; i < count; i++) {
            final long from = random.nextInt(16);
            final long to = (from + 1 + random.nextInt(15)) % 16;
            final long amount = 1 + random.nextInt(9);
            moves.add(new long[] {from, to, amount});
            final long t0 = System.nanoTime();
            final int move = i;
            outcomes.add(client.callOn(i % 2 == 0 ? "cn0" : "cn1", "move", from, to, amount).onComplete(o ->
                tookMs[move] = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)));
        }
        io.vertx.core.Future.join(outcomes).await(60, java.util.concurrent.TimeUnit.SECONDS);
        final long[] sorted = tookMs.clone();
        java.util.Arrays.sort(sorted);
        System.out.println("concurrent moves: answered in ms p50 " + sorted[count / 2] + ", p90 " + sorted[count * 9 / 10]
            + ", max " + sorted[count - 1]);
        final int[] committedOn = new int[2];
        for (int i = 0; i < moves.size(); i++) {
            final ScytheClient.Outcome o = outcomes.get(i).result();
            assertThat(o).as("move " + i + ": committed or aborted, never unknown")
                .isInstanceOfAny(ScytheClient.Outcome.Committed.class, ScytheClient.Outcome.Aborted.class);
            if (o instanceof ScytheClient.Outcome.Aborted a) {
                abortReasons.add(a.reason());
            }
            if (o instanceof ScytheClient.Outcome.Committed) {
                committedOn[i % 2]++;
                expected[(int) moves.get(i)[0]] -= moves.get(i)[2];
                expected[(int) moves.get(i)[1]] += moves.get(i)[2];
            }
        }
        return committedOn;
    }

    /**
     * Reads every counter {@code k < expected.length} by {@code get} and checks it is {@code expected[k]} ({@code when}
     * names the moment); returns their sum.
     */
    static long assertCounters(final java.util.function.LongFunction<io.vertx.core.Future<ScytheClient.Outcome>> get,
                               final long[] expected, final String when) throws Exception {
        long sum = 0;
        for (int k = 0; k < expected.length; k++) {
            final ScytheClient.Outcome o = get.apply(k).await(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(o).as("get " + k + when).isInstanceOf(ScytheClient.Outcome.Committed.class);
            final long value = ((ScytheClient.Outcome.Committed) o).reply().result();
            assertThat(value).as("key " + k + when).isEqualTo(expected[k]);
            sum += value;
        }
        return sum;
    }

    /** Whether a move of 0 from {@code from} to {@code to} commits on compute node {@code cn} (within 10 s). */
    static boolean committedOn(final ScytheClient client, final String cn, final long from, final long to) {
        try {
            return client.callOn(cn, "move", from, to, 0).await(10, java.util.concurrent.TimeUnit.SECONDS)
                instanceof ScytheClient.Outcome.Committed;
        } catch (final Exception e) {
            return false;
        }
    }

    /**
     * With {@code mns} memory nodes, each with {@code mns - 1} backups: partition p's primary on mn{p} (its share of
     * {@code keys}) equals its backup b on mn{(p + b) mod mns}, b = 1 .. mns - 1 (another process each).
     */
    static void assertCopiesIdentical(final LocalCluster cluster, final int mns, final int keys) throws Exception {
        final io.vertx.core.json.JsonObject[] copies = new io.vertx.core.json.JsonObject[mns];
        for (int m = 0; m < mns; m++) {
            copies[m] = new io.vertx.core.json.JsonObject(get(cluster, "mn" + m, "/copies"));
            assertThat(copies[m].getInteger("backups")).isEqualTo(mns - 1);
        }
        for (int p = 0; p < mns; p++) {
            final io.vertx.core.json.JsonObject primary = copies[p].getJsonObject("tables").getJsonObject("counters");
            assertThat(primary.getLong("objects")).as("partition %d's keys", p).isEqualTo(keys / mns);
            for (int b = 1; b < mns; b++) {
                final io.vertx.core.json.JsonObject backup = copies[(p + b) % mns].getJsonObject("tables")
                    .getJsonObject("counters.backup" + b);
                assertThat(backup).as("backup %d of partition %d on mn%d", b, p, (p + b) % mns).isEqualTo(primary);
            }
        }
    }
}
