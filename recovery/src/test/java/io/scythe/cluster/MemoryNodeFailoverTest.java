package io.scythe.cluster;

import io.scythe.txn.MemoryNodeConfiguration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The configuration as the Hazelcast map holds it: what a CN writes another decodes, rejoining nodes included. */
class MemoryNodeFailoverTest {
    @Test
    void shouldDecodeWhatItEncodesWithRejoiningNodesAndOlderEntriesWithoutThem() {
        final MemoryNodeConfiguration rejoin = MemoryNodeConfiguration.initial(3, 1).without(1).rejoin(1, 1);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(rejoin))).isEqualTo(rejoin);
        final MemoryNodeConfiguration without = MemoryNodeConfiguration.initial(3, 1).without(2);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(without))).isEqualTo(without);
        assertThat(without.primarySince()).as("p2's backup promoted in epoch 1").containsExactly(0L, 0L, 1L);
        final MemoryNodeConfiguration older = MemoryNodeFailover.decode(
            "{\"epoch\":1,\"copies\":[[0],[1],[0,1]],\"removed\":[1]}");
        final MemoryNodeConfiguration without1 = MemoryNodeConfiguration.initial(3, 1).without(1);
        assertThat(older.copies()).as("an entry written before rejoin existed").isEqualTo(without1.copies());
        assertThat(older.removed()).isEqualTo(without1.removed());
        assertThat(older.primarySince()).as("one written before terms: every term from the start, as read then")
            .containsExactly(0L, 0L, 0L);
    }

    /**
     * Configurations heard from Hazelcast are applied off its event thread (applying one may block on an IMap.get),
     * one at a time, in the order heard: the caller (the event thread) is not held up by a blocked apply.
     */
    @Test
    void shouldApplyConfigurationsOnAWorkerInTheOrderHeardWithoutHoldingTheCaller() throws Exception {
        final io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            final java.util.List<Long> applied = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(3);
            final MemoryNodeFailover.InOrder deliver = MemoryNodeFailover.inOrder(vertx, c -> {
                threads.add(Thread.currentThread().getName());
                try {
                    if (c.epoch() == 1) {
                        release.await(); // blocks, as a rejoin's IMap.get may
                    }
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                applied.add(c.epoch());
                all.countDown();
            }, () -> MemoryNodeConfiguration.initial(3, 1), e -> { }, 1_000);
            final MemoryNodeConfiguration one = MemoryNodeConfiguration.initial(3, 1).without(1);
            final MemoryNodeConfiguration two = one.rejoin(1, 1);
            final long startNs = System.nanoTime();
            for (final MemoryNodeConfiguration c : java.util.List.of(one, two, two.rejoined(1))) {
                deliver.accept(MemoryNodeFailover.encode(c));
            }
            assertThat(System.nanoTime() - startNs).as("the caller is not held up by the blocked apply")
                .isLessThan(java.util.concurrent.TimeUnit.SECONDS.toNanos(10)); // the apply waits for ever
            Thread.sleep(50);
            assertThat(applied).as("nothing overtakes the blocked first one").isEmpty();
            release.countDown();
            assertThat(all.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(applied).containsExactly(1L, 2L, 3L);
            assertThat(threads).as("never on the caller's thread").noneMatch(t -> t.equals(Thread.currentThread()
                .getName())).allMatch(t -> t.contains("worker"));
        } finally {
            vertx.close().await(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * The configuration current at start goes through the same queue (review 41: applied on the starting thread it
     * ran beside a newer one the watch applied, and could finish last): it waits behind one heard before it, and its
     * future completes once it was applied. A failed apply is logged, and the current configuration applied again.
     */
    @Test
    void shouldQueueTheCurrentConfigurationBehindOnesHeardAndApplyTheCurrentOneAgainAfterAFailure() throws Exception {
        final io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            final MemoryNodeConfiguration one = MemoryNodeConfiguration.initial(3, 1).without(1);
            final MemoryNodeConfiguration two = one.rejoin(1, 1);
            final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            final java.util.List<Long> applied = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.concurrent.atomic.AtomicBoolean failOnce = new java.util.concurrent.atomic.AtomicBoolean();
            final java.util.concurrent.atomic.AtomicReference<MemoryNodeConfiguration> current =
                new java.util.concurrent.atomic.AtomicReference<>(one);
            final MemoryNodeFailover.InOrder deliver = MemoryNodeFailover.inOrder(vertx, c -> {
                try {
                    if (c.epoch() == two.epoch()) {
                        release.await(); // the watch's apply of a newer one, blocked on a published table
                    }
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (c.epoch() == 1 && failOnce.compareAndSet(true, false)) {
                    throw new IllegalStateException("a map read failed");
                }
                applied.add(c.epoch());
            }, current::get, logged::add, 20);
            deliver.accept(MemoryNodeFailover.encode(two));
            final io.vertx.core.Future<Void> initial = deliver.current();
            Thread.sleep(50);
            assertThat(initial.isComplete()).as("the current one waits behind the one heard first").isFalse();
            assertThat(applied).isEmpty();
            release.countDown();
            initial.await(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(applied).as("in the order queued: the starting thread's one last").containsExactly(2L, 1L);
            failOnce.set(true);
            deliver.accept(MemoryNodeFailover.encode(one));
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (applied.size() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(logged).as("the failure logged, not dropped").singleElement().asString()
                .contains("not applied").contains("a map read failed").contains("applies the current one in 20 ms");
            assertThat(applied).as("then the current configuration applied again").containsExactly(2L, 1L, 1L);
            shouldKeepOneRetryPendingDoublingItsDelayAndStopOnceClosed(vertx);
        } finally {
            vertx.close().await(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Review 41, second pass: failures do not each start a retry chain of their own: one retry is pending at a time,
     * its delay doubles after each failure, and none runs once closed (the node stopped serving). Run on the Vert.x
     * of the test above (one instance less to start).
     */
    private static void shouldKeepOneRetryPendingDoublingItsDelayAndStopOnceClosed(final io.vertx.core.Vertx vertx)
        throws Exception {
        {
            final java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
            final java.util.List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
            final MemoryNodeFailover.InOrder deliver = MemoryNodeFailover.inOrder(vertx, c -> {
                tries.incrementAndGet();
                throw new IllegalStateException("a map read failed");
            }, () -> MemoryNodeConfiguration.initial(3, 1), logged::add, 5);
            final String one = MemoryNodeFailover.encode(MemoryNodeConfiguration.initial(3, 1).without(1));
            for (int i = 0; i < 3; i++) {
                deliver.accept(one);
            }
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (logged.stream().noneMatch(l -> l.contains("in 20 ms")) && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            deliver.close();
            Thread.sleep(60); // past the pending 20 ms retry
            assertThat(logged.stream().filter(l -> l.contains("applies the current one in")).map(l -> l.replaceAll(
                ".* in ", ""))).as("one chain, its delay doubling").containsExactly("5 ms", "10 ms", "20 ms");
            assertThat(logged.stream().filter(l -> l.contains("a retry is pending already"))).hasSize(2);
            assertThat(tries.get()).as("the three heard and two retries: none once closed").isEqualTo(5);
        }
    }

    /**
     * Review 41, second pass: a memory node applies only configurations newer than the one it applied: an older one
     * heard late (a "removed" after "back") or the same again is skipped; one that failed to apply is not counted.
     */
    @Test
    void shouldApplyOnlyConfigurationsNewerThanTheOneApplied() {
        final java.util.List<Long> applied = new java.util.ArrayList<>();
        final java.util.concurrent.atomic.AtomicBoolean failOnce = new java.util.concurrent.atomic.AtomicBoolean(true);
        final java.util.function.Consumer<MemoryNodeConfiguration> apply = MemoryNodeFailover.newerOnly(c -> {
            if (c.epoch() == 2 && failOnce.getAndSet(false)) {
                throw new IllegalStateException("failed");
            }
            applied.add(c.epoch());
        });
        final MemoryNodeConfiguration removed = MemoryNodeConfiguration.initial(3, 1).without(1);
        final MemoryNodeConfiguration back = removed.rejoin(1, 1);
        apply.accept(removed);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> apply.accept(back));
        apply.accept(back);
        apply.accept(removed);
        apply.accept(back);
        assertThat(applied).containsExactly(1L, 2L);
    }

    /**
     * Which configurations a CN settles, and from which epoch on the others' drains count (the chaos run of
     * {@code chaos --protocol aurogon --mn-faults --mns 3 --seed 2}: mn0 killed and rejoined, mn2 killed and rejoined,
     * mn2 killed again). They settle only epochs that promoted something or start a rejoin (each drains every one
     * it applies: {@link #shouldDrainEveryAppliedEpochSoARejoinOverABackupsRemovalGoesOn}).
     */
    @Test
    void shouldSettleWhatAConfigurationPromotedCountingTheDrainsOfTheEpochsThatPromotedIt() {
        final MemoryNodeConfiguration initial = MemoryNodeConfiguration.initial(3, 2);
        final MemoryNodeConfiguration e1 = initial.without(0);
        final MemoryNodeConfiguration e2 = e1.rejoin(0, 2);
        final MemoryNodeConfiguration e3 = e2.rejoined(0);
        final MemoryNodeConfiguration e4 = e3.without(2);
        final MemoryNodeConfiguration e5 = e4.rejoin(2, 2);
        final MemoryNodeConfiguration e6 = e5.rejoined(2);
        final MemoryNodeConfiguration e7 = e6.without(2);
        assertThat(e7.epoch()).isEqualTo(7);
        assertThat(e6.primarySince()).as("p0 promoted in epoch 1, p2 in epoch 4").containsExactly(1L, 0L, 4L);
        // Applied one after the other: each promotion at its own epoch; a rejoin's start (a node back) at its own.
        assertThat(MemoryNodeFailover.settlementDrainedSince(null, e1, initial, false)).isEqualTo(1);
        assertThat(MemoryNodeFailover.settlementDrainedSince(e1, e2, initial, true)).isEqualTo(2);
        assertThat(MemoryNodeFailover.settlementDrainedSince(e3, e4, initial, false)).isEqualTo(4);
        assertThat(MemoryNodeFailover.settlementDrainedSince(e4, e5, initial, true)).isEqualTo(5);
        assertThat(MemoryNodeFailover.settlementDrainedSince(e5, e6, initial, false))
            .as("a rejoin's end promotes nothing: no CN settles (nor drains) it").isEqualTo(-1);
        // A CN whose first configuration is e6 (restarted after the failovers): the others drained epoch 4 (and 1).
        assertThat(MemoryNodeFailover.settlementDrainedSince(null, e6, initial, false)).isEqualTo(4);
        // A CN that skipped e4 and e5 (applied e3, then the current one): p2 was promoted, drained, in epoch 4;
        // asked for drains of epoch 6, which no other CN settles, it waited for good.
        assertThat(MemoryNodeFailover.settlementDrainedSince(e3, e6, initial, false)).isEqualTo(4);
        // e7 removed mn2, primary of nothing: it promotes nothing, so no settlement of its own, even on a CN still
        // settling e6 (that one unblocks what e6 blocked); one of its own asked for drains of 7 that nobody makes.
        assertThat(MemoryNodeFailover.settlementDrainedSince(e6, e7, initial, false)).isEqualTo(-1);
        assertThat(MemoryNodeFailover.settlementDrainedSince(null, e7, initial, false)).isEqualTo(4);
    }

    /**
     * Stop 45's chaos run (seed 2): mn0 rejoined (epoch 3), mn2 killed (epoch 4 promoted p2 on mn1), then a split cut
     * mn0 off and epoch 5 removed it, a backup only (p0=mn1 p1=mn1 p2=mn1): it promoted nothing and started no rejoin,
     * so no CN settled it, and none drained it either; mn0's replacement then waited 120 s at its rejoin's first step
     * ("epoch 5 to settle: cn0, cn1, cn2 to drain (it drained epoch 4 last)") and gave up. Every applied epoch is
     * drained now; what settles stays as it was.
     */
    @Test
    void shouldDrainEveryAppliedEpochSoARejoinOverABackupsRemovalGoesOn() {
        final MemoryNodeConfiguration initial = MemoryNodeConfiguration.initial(3, 2);
        final MemoryNodeConfiguration e3 = initial.without(0).rejoin(0, 2).rejoined(0);
        final MemoryNodeConfiguration e4 = e3.without(2);
        final MemoryNodeConfiguration e5 = e4.without(0);
        assertThat(e5.epoch()).isEqualTo(5);
        assertThat(e5.promotedSince(e4)).as("mn0 was primary of nothing in epoch 4").isEmpty();
        final MemoryNodeFailover.Settlement removal = MemoryNodeFailover.settlementOf(e4, e5, initial, false);
        assertThat(removal).as("epoch 5 is drained by a CN that applies it")
            .isEqualTo(new MemoryNodeFailover.Settlement(5, -1));
        assertThat(removal.settles()).as("it blocked nothing: nothing to unblock").isFalse();
        // A rejoin's end, too; a promotion and a rejoin's start settle (and drain) as before.
        final MemoryNodeConfiguration e6 = e5.rejoin(0, 2);
        assertThat(MemoryNodeFailover.settlementOf(e6, e6.rejoined(0), initial, false))
            .isEqualTo(new MemoryNodeFailover.Settlement(7, -1));
        assertThat(MemoryNodeFailover.settlementOf(e3, e4, initial, false))
            .isEqualTo(new MemoryNodeFailover.Settlement(4, 4));
        assertThat(MemoryNodeFailover.settlementOf(e5, e6, initial, true).settles()).isTrue();
    }

    /**
     * The drain-every-epoch path through {@link MemoryNodeFailover#settle} itself (review of aurosplit: only
     * {@code settlementOf} was tested). A CN's catalog still blocks the partition epoch 1 promoted (its settlement
     * not done) when it applies epoch 5, which removed only a backup: the drain-only settlement waits out the CN's
     * commit in flight from before epoch 5, then records its drain of epoch 5 once, asks the cluster nothing else and
     * never calls {@code Catalog#settled}, so epoch 1's partition stays blocked. Epoch 1's own settlement, the others
     * drained, unblocks it. Fails with the settling guard before {@code catalog.settled} removed (epoch 5's drain-only
     * settle unblocked epoch 1's partition before its commits in flight were settled).
     */
    @Test
    void shouldDrainAnEpochThatRemovedOnlyABackupAndNeverSettleThroughIt() throws Exception {
        final MemoryNodeConfiguration initial = MemoryNodeConfiguration.initial(3, 2);
        final MemoryNodeConfiguration e4 = initial.without(0).rejoin(0, 2).rejoined(0).without(2);
        final MemoryNodeFailover.Settlement drainOnly = MemoryNodeFailover.settlementOf(e4, e4.without(0), initial,
            false);
        assertThat(drainOnly.settles()).isFalse();
        final java.util.List<String> nodes = java.util.List.of("mn0", "mn1", "mn2");
        final io.scythe.storage.TableSchema schema = new io.scythe.storage.TableSchema(7, "accounts", 64, true, 1024,
            io.scythe.storage.IndexKind.HASH, 0, false);
        final java.util.Map<String, java.util.List<io.scythe.storage.TableDescriptor>> tables =
            new java.util.LinkedHashMap<>();
        for (final String node : nodes) {
            final java.util.List<io.scythe.storage.TableDescriptor> held = new java.util.ArrayList<>();
            for (int b = 0; b <= 2; b++) {
                final io.scythe.storage.TableSchema s = b == 0 ? schema
                    : io.scythe.storage.BackupTables.schemaOf(schema, b);
                final io.scythe.fabric.RemoteRegion region = new io.scythe.fabric.RemoteRegion(node, s.name(),
                    4096L * s.id(), 4096, s.id(), io.scythe.fabric.MemoryKind.HOST);
                held.add(new io.scythe.storage.TableDescriptor(s, region, region, region, 16));
            }
            tables.put(node, held);
        }
        final io.scythe.txn.Catalog catalog = io.scythe.txn.Catalog.fromMemoryNodes(nodes, tables);
        assertThat(catalog.reconfigure(initial.without(2))).isTrue();
        assertThat(catalog.settling()).as("epoch 1 promoted partition 2's backup").isTrue();
        catalog.decided(0); // a commit of epoch 0 still writing back
        final java.util.List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        final MemoryNodeFailover.Drains drains = new MemoryNodeFailover.Drains() {
            @Override
            public void drained(final long epoch) {
                told.add("drained " + epoch);
            }

            @Override
            public String waitsFor(final long epoch, final long drainedSince) {
                told.add("asked " + epoch + " since " + drainedSince);
                return null; // every other CN drained
            }
        };
        final java.util.concurrent.atomic.AtomicInteger polls = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.function.BooleanSupplier counted = () -> polls.incrementAndGet() < 0; // never stopped
        final io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            vertx.runOnContext(v -> MemoryNodeFailover.settle(vertx, catalog, drains, counted, line -> { }, 2,
                drainOnly));
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (polls.get() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(polls.get()).as("polls ran while the commit writes back").isGreaterThanOrEqualTo(3);
            assertThat(told).as("not drained while a commit of an older epoch writes back").isEmpty();
            catalog.finished(0);
            while (told.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(told).as("drained once the commit finished").isNotEmpty();
            // Polls run 2 ms apart until the drain's answer cancels the timer: they stop, the drain told once.
            int seen = -1;
            while (polls.get() != seen && System.nanoTime() < deadline) {
                seen = polls.get();
                Thread.sleep(50);
            }
            assertThat(polls.get()).as("the drain's timer cancelled once told").isEqualTo(seen);
            assertThat(told).as("drained, nothing else asked").containsExactly("drained 5");
            assertThat(catalog.settling()).as("epoch 1's partition still blocked").isTrue();

            vertx.runOnContext(v -> MemoryNodeFailover.settle(vertx, catalog, drains, () -> false, line -> { }, 2,
                new MemoryNodeFailover.Settlement(1, 1)));
            final long settleDeadline = System.nanoTime() + 5_000_000_000L;
            while (catalog.settling() && System.nanoTime() < settleDeadline) {
                Thread.sleep(5);
            }
            assertThat(catalog.settling()).as("epoch 1's own settlement unblocks").isFalse();
            assertThat(told).containsExactly("drained 5", "drained 1", "asked 1 since 1");
        } finally {
            vertx.close().await(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Stop 45: mn2's replacement, started once epoch 5 removed its predecessor, joined a minority during a split; when
     * it merged back, the current configuration (epoch 5) "removed it meanwhile", and it stopped 0.4 s after asking to
     * rejoin. A replacement that has not served yet is not removed by its predecessor's removal; once a configuration
     * had it back, a later removal stops it, as it stops an original process.
     */
    @Test
    void shouldNotStopAReplacementThatMergesBackBeforeItRejoinedForItsPredecessorsRemoval() {
        final java.util.List<String> removed = java.util.List.of("mn0", "mn2");
        assertThat(ScytheNode.removesThisProcess(removed, "mn2", true, false))
            .as("mn2's replacement, not back yet").isFalse();
        assertThat(ScytheNode.removesThisProcess(removed, "mn2", true, true))
            .as("a replacement that served again, removed again").isTrue();
        assertThat(ScytheNode.removesThisProcess(removed, "mn0", false, false)).as("an original process").isTrue();
        assertThat(ScytheNode.removesThisProcess(removed, "mn1", false, false)).isFalse();
        assertThat(ScytheNode.removesThisProcess(java.util.List.of(), "mn2", true, true)).isFalse();
    }

    /** "Waits for cnX to drain" says which epoch cnX drained last: late (commits in flight), or never asked to. */
    @Test
    void shouldNameTheLatestEpochEachAwaitedComputeNodeDrained() {
        final java.util.List<String> waiting = new java.util.ArrayList<>(java.util.List.of("cn1 to drain",
            "cn2 to drain", "cn3 to be recovered"));
        MemoryNodeFailover.nameLatestDrains(waiting, java.util.List.of("1:cn1", "4:cn1", "2:cn1", "4:cn0"));
        assertThat(waiting).containsExactly("cn1 to drain (it drained epoch 4 last)",
            "cn2 to drain (it drained no epoch yet)", "cn3 to be recovered");
    }
}
