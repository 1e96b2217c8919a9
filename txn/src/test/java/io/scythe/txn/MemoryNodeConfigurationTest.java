package io.scythe.txn;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.RemoteRegion;
import io.scythe.storage.BackupTables;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.TableSchema;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** MN failover's configurations: a backup promoted for each partition a removed node was primary of, applied. */
class MemoryNodeConfigurationTest {
    private static final List<String> NODES = List.of("mn0", "mn1", "mn2");

    @Test
    void shouldPromoteTheFirstServingBackupOfEachPartitionTheRemovedNodeWasPrimaryOf() {
        final MemoryNodeConfiguration start = MemoryNodeConfiguration.initial(3, 2);
        assertThat(start.epoch()).isZero();
        assertThat(start.copies()).containsExactly(List.of(0, 1, 2), List.of(0, 1, 2), List.of(0, 1, 2));

        final MemoryNodeConfiguration without2 = start.without(2);
        assertThat(without2.epoch()).isEqualTo(1);
        // p2's primary was on mn2: its backup 1 (mn0) is promoted, backup 2 (mn1) stays a backup; p0 loses its
        // backup 2 (mn2), p1 its backup 1 (mn2).
        assertThat(without2.copies()).containsExactly(List.of(0, 1), List.of(0, 2), List.of(1, 2));
        assertThat(without2.promotedSince(start)).containsExactly(2);
        assertThat(without2.describe(NODES)).isEqualTo("epoch 1: p0=mn0,mn1 p1=mn1,mn0 p2=mn0,mn1 removed=[mn2]");
        assertThat(without2.without(2)).as("removing it again changes nothing").isSameAs(without2);

        final MemoryNodeConfiguration without20 = without2.without(0);
        assertThat(without20.epoch()).isEqualTo(2);
        assertThat(without20.copies()).containsExactly(List.of(1), List.of(0), List.of(2));
        assertThat(without20.describe(NODES)).isEqualTo("epoch 2: p0=mn1 p1=mn1 p2=mn1 removed=[mn0, mn2]");
        assertThatThrownBy(() -> without20.without(1)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("partition 0 has no serving copy left without memory node 1")
            .hasMessageContaining("its data is lost");
        assertThatThrownBy(() -> MemoryNodeConfiguration.initial(3, 0).without(1))
            .hasMessageContaining("partition 1 has no serving copy left");
        assertThatThrownBy(() -> start.without(3)).hasMessageContaining("memory node 3 is not one of the 3");
        assertThatThrownBy(() -> MemoryNodeConfiguration.initial(2, 2)).hasMessageContaining("backups < nodes");
    }

    @Test
    void shouldServeEachPartitionFromItsPromotedCopyOnceTheCatalogIsReconfigured() {
        final Catalog catalog = Catalog.fromMemoryNodes(NODES, tables("accounts", 2));
        final Catalog.Partition p2 = catalog.table("accounts").partitionOf(2);
        assertThat(p2.node()).isEqualTo("mn2");
        assertThat(catalog.epoch()).isZero();

        final MemoryNodeConfiguration next = MemoryNodeConfiguration.initial(3, 2).without(2);
        assertThat(catalog.reconfigure(next)).isTrue();
        assertThat(catalog.epoch()).isEqualTo(1);
        assertThat(catalog.removed("mn2")).isTrue();
        assertThat(catalog.removed("mn0")).isFalse();
        final Catalog.Partition promoted = catalog.table("accounts").partitionOf(2);
        assertThat(promoted.node()).as("backup 1 of p2 is on mn0").isEqualTo("mn0");
        assertThat(promoted.descriptor()).isSameAs(p2.backups().get(0).descriptor());
        assertThat(promoted.descriptor().schema().name()).isEqualTo("accounts.backup1");
        assertThat(promoted.backups()).extracting(Catalog.Replica::node).containsExactly("mn1");
        assertThat(catalog.table("accounts").partitionOf(0).backups()).extracting(Catalog.Replica::node)
            .containsExactly("mn1");
        assertThat(catalog.table("accounts").partitionOf(1).node()).isEqualTo("mn1");
        assertThat(catalog.table("accounts").partitionOf(1).backups()).extracting(Catalog.Replica::node)
            .containsExactly("mn0");
        // A redo entry names the copy it was written for: the loaded primary, served now by the promoted copy.
        final Catalog.Serving serving = catalog.servingOf("mn2", p2.descriptor().schema().id());
        assertThat(serving.partition()).isSameAs(catalog.table("accounts").partitionOf(2));
        assertThat(serving.primaryCopy()).isEqualTo(1);
        assertThat(serving.servingPointers(50, new long[] {60, 70})).as("copy 1 serves as primary, copy 2 as backup")
            .containsExactly(60, 70);
        // A redo entry written now names p2 as loaded: copy 0 gone (pointer 0), the promoted copy as copy 1.
        final Catalog.LoadedAs loadedAs = catalog.loadedAs("accounts", promoted);
        assertThat(loadedAs.loaded()).isEqualTo(p2);
        assertThat(loadedAs.copies()).containsExactly(1, 2);
        assertThat(new long[] {loadedAs.pointerOf(0, 11, new long[] {22}), loadedAs.pointerOf(1, 11, new long[] {22}),
            loadedAs.pointerOf(2, 11, new long[] {22})}).containsExactly(0, 11, 22);
        assertThat(catalog.loadedAs("accounts", catalog.table("accounts").partitionOf(0)).copies())
            .as("p0 lost its backup 2").containsExactly(0, 1);
        assertThatThrownBy(() -> catalog.loadedAs("accounts", new Catalog.Partition("mn0",
            p2.descriptor()))).hasMessageContaining("no copy of a partition the catalog loaded");
        assertThat(catalog.reconfigure(next)).as("an epoch applied already is ignored").isFalse();
        assertThat(catalog.reconfigure(MemoryNodeConfiguration.initial(3, 2))).isFalse();
    }

    /**
     * A catalog told its promoted copies serve at once (cluster nodes running CALVIN, issue 18) blocks no partition a
     * configuration promotes, through two failovers, and serves each from its promoted copy.
     */
    @Test
    void shouldBlockNothingWhenPromotedCopiesServeAtOnce() {
        final Catalog catalog = Catalog.fromMemoryNodes(NODES, tables("accounts", 2));
        catalog.servePromotedAtOnce();
        final MemoryNodeConfiguration without2 = MemoryNodeConfiguration.initial(3, 2).without(2);
        assertThat(catalog.reconfigure(without2)).isTrue();
        final Catalog.Table t = catalog.table("accounts");
        assertThat(t.partitionOf(2).node()).as("p2 served by a promoted copy").isNotEqualTo(NODES.get(2));
        assertThat(catalog.blocked(t.partitionOf(2))).as("promoted, serving at once").isFalse();
        assertThat(catalog.settling()).isFalse();
        assertThat(catalog.reconfigure(without2.without(0))).isTrue();
        final Catalog.Table t2 = catalog.table("accounts");
        for (int p = 0; p < 3; p++) {
            assertThat(catalog.blocked(t2.partitionOf(p))).as("p" + p + " after the second failover").isFalse();
        }
        assertThat(catalog.settled(2)).as("nothing was blocked").isFalse();
    }

    /**
     * FaRM's blocked region: the partitions whose primary a configuration promotes are blocked until its commits in
     * flight are settled; a second failover before that keeps them blocked (as they serve then) and adds its own,
     * and only the settlement of the later epoch unblocks. Commits past their point of no return are counted per
     * epoch: what a compute node drains before it tells the cluster.
     */
    @Test
    void shouldBlockPromotedPartitionsUntilTheFailoversCommitsAreSettled() {
        final Catalog catalog = Catalog.fromMemoryNodes(NODES, tables("accounts", 2));
        assertThat(catalog.settling()).isFalse();
        catalog.decided(0);
        catalog.decided(0);
        final MemoryNodeConfiguration without2 = MemoryNodeConfiguration.initial(3, 2).without(2);
        assertThat(catalog.reconfigure(without2)).isTrue();
        final Catalog.Table t = catalog.table("accounts");
        assertThat(catalog.blocked(t.partitionOf(2))).as("promoted").isTrue();
        assertThat(catalog.blocked(t.partitionOf(0))).as("only lost a backup").isFalse();
        assertThat(catalog.blocked(t.partitionOf(1))).isFalse();
        assertThat(catalog.inFlightBefore(1)).as("two commits of epoch 0 past their point of no return").isEqualTo(2);
        catalog.finished(0);
        catalog.decided(1);
        assertThat(catalog.inFlightBefore(1)).as("epoch 1's own commit is not waited for").isEqualTo(1);
        catalog.finished(0);
        assertThat(catalog.inFlightBefore(1)).isZero();

        final MemoryNodeConfiguration without20 = without2.without(0);
        assertThat(catalog.reconfigure(without20)).isTrue();
        final Catalog.Table t2 = catalog.table("accounts");
        assertThat(catalog.blocked(t2.partitionOf(0))).as("promoted by epoch 2").isTrue();
        assertThat(catalog.blocked(t2.partitionOf(2))).as("still blocked from epoch 1").isTrue();
        assertThat(catalog.settled(1)).as("epoch 2 blocked more: its own settlement unblocks").isFalse();
        assertThat(catalog.blocked(t2.partitionOf(2))).isTrue();
        assertThat(catalog.settled(2)).isTrue();
        assertThat(catalog.settling()).isFalse();
        assertThat(catalog.blocked(t2.partitionOf(0))).isFalse();
        assertThat(catalog.settled(2)).as("nothing left to unblock").isFalse();
    }

    /**
     * Rejoin: a removed node's copies serve again as the last backups of their partitions (its loaded primary too,
     * behind the promoted copy), the node rejoining until {@code rejoined}: not promoted and not a full copy meanwhile,
     * so losing the last full copy then loses the partition. Nothing is blocked (no primary moved).
     */
    @Test
    void shouldAddARejoiningNodesCopiesAsBackupsCountedFullOnlyOnceRejoined() {
        final MemoryNodeConfiguration without1 = MemoryNodeConfiguration.initial(3, 1).without(1);
        assertThat(without1.copies()).containsExactly(List.of(0), List.of(1), List.of(0, 1));
        assertThatThrownBy(() -> without1.rejoin(0, 1)).hasMessageContaining("memory node 0 cannot rejoin: it was "
            + "not removed (it serves)");
        final MemoryNodeConfiguration rejoin = without1.rejoin(1, 1);
        assertThat(rejoin.epoch()).isEqualTo(2);
        // p0's backup 1 is on mn1 again; p1's loaded primary (copy 0, on mn1) is a backup of the promoted copy 1.
        assertThat(rejoin.copies()).containsExactly(List.of(0, 1), List.of(1, 0), List.of(0, 1));
        assertThat(rejoin.removed()).isEmpty();
        assertThat(rejoin.rejoining()).containsExactly(1);
        assertThat(rejoin.promotedSince(without1)).isEmpty();
        assertThat(rejoin.fullCopies(0)).isEqualTo(1);
        assertThat(rejoin.fullCopies(1)).isEqualTo(1);
        assertThat(rejoin.describe(NODES)).isEqualTo("epoch 2: p0=mn0,mn1 p1=mn2,mn1 p2=mn2,mn0 rejoining=[mn1]");
        assertThatThrownBy(() -> rejoin.rejoin(1, 1)).hasMessageContaining("(it is rejoining already)");
        assertThatThrownBy(() -> rejoin.without(0)).as("mn1's copy of p0 is not re-replicated yet")
            .hasMessageContaining("partition 0 has no serving copy left without memory node 0")
            .hasMessageContaining("those rejoining are not re-replicated yet");
        final MemoryNodeConfiguration again = rejoin.without(1);
        assertThat(again.copies()).as("removed again before it finished").isEqualTo(without1.copies());
        assertThat(again.rejoining()).isEmpty();
        assertThat(again.removed()).containsExactly(1);

        final MemoryNodeConfiguration full = rejoin.rejoined(1);
        assertThat(full.epoch()).isEqualTo(3);
        assertThat(full.rejoining()).isEmpty();
        assertThat(full.fullCopies(0)).isEqualTo(2);
        assertThat(full.rejoined(1)).isSameAs(full);
        final MemoryNodeConfiguration without0 = full.without(0);
        assertThat(without0.copies()).as("the rejoined copy is promoted").containsExactly(List.of(1), List.of(1, 0),
            List.of(0));
        assertThat(without0.promotedSince(full)).containsExactly(0);

        final Catalog catalog = Catalog.fromMemoryNodes(NODES, tables("accounts", 1));
        final Catalog.Partition loaded1 = catalog.table("accounts").partitionOf(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.settled(without1.epoch())).isTrue();
        assertThat(catalog.reconfigure(rejoin)).isTrue();
        assertThat(catalog.removed("mn1")).isFalse();
        assertThat(catalog.settling()).as("a rejoin moves no primary").isFalse();
        final Catalog.Partition p1 = catalog.table("accounts").partitionOf(1);
        assertThat(p1.node()).isEqualTo("mn2");
        assertThat(p1.backups()).containsExactly(new Catalog.Replica("mn1", loaded1.descriptor()));
        assertThat(catalog.table("accounts").partitionOf(0).backups()).extracting(Catalog.Replica::node)
            .containsExactly("mn1");
    }

    /**
     * Terms (issue 23): only a promotion starts one, so a copy primary twice (copy 0 of p1: loaded primary, removed,
     * rejoined as a backup, primary again) has two terms; the catalog tells recovery the term of each partition.
     */
    @Test
    void shouldStartAPrimarysTermOnlyWhenAPromotionMovesIt() {
        final MemoryNodeConfiguration initial = MemoryNodeConfiguration.initial(3, 1);
        assertThat(initial.primarySince()).containsExactly(0L, 0L, 0L);
        final MemoryNodeConfiguration without1 = initial.without(1);
        assertThat(without1.primarySince()).as("p1's backup promoted in epoch 1").containsExactly(0L, 1L, 0L);
        final MemoryNodeConfiguration rejoined = without1.rejoin(1, 1).rejoined(1);
        assertThat(rejoined.primarySince()).as("a rejoin moves no primary").containsExactly(0L, 1L, 0L);
        final MemoryNodeConfiguration without2 = rejoined.without(2);
        assertThat(without2.epoch()).isEqualTo(4);
        assertThat(without2.primaryCopy(1)).as("p1's copy 0 primary again").isZero();
        assertThat(without2.primarySince()).as("p1 and p2 promoted in epoch 4; p0 kept its primary")
            .containsExactly(0L, 4L, 4L);
        assertThat(without2.without(2)).isSameAs(without2);
        assertThatThrownBy(() -> new MemoryNodeConfiguration(1, without1.copies(), without1.removed(), Set.of(),
            List.of(0L, 2L, 0L))).hasMessageContaining("must lie in [0, epoch 1]");
        final Catalog catalog = Catalog.fromMemoryNodes(NODES, tables("accounts", 1));
        assertThat(catalog.servingOf("mn1", 7).primarySince()).as("no configuration: every term from 0").isZero();
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.servingOf("mn1", 7).primarySince()).isEqualTo(1);
        assertThat(catalog.servingOf("mn0", 7).primarySince()).isZero();
    }

    /**
     * A replacement process of mn1 (new regions: other addresses and rkeys) rejoins: the catalog takes its tables for
     * every copy on mn1 (the primary it was loaded as, and its backup), counts a new incarnation of mn1, and leaves the
     * other nodes' copies alone; a replacement without a table the catalog places there is refused, naming it.
     */
    @Test
    void shouldSwitchARejoiningNodesCopiesToTheTablesOfItsReplacementProcess() {
        final Map<String, List<TableDescriptor>> published = tables("accounts", 1);
        final Catalog catalog = Catalog.fromMemoryNodes(NODES, published);
        final MemoryNodeConfiguration without1 = MemoryNodeConfiguration.initial(3, 1).without(1);
        assertThat(catalog.reconfigure(without1, mn -> {
            throw new AssertionError("nothing comes back in the failover");
        })).isTrue();
        final List<TableDescriptor> replacement = new ArrayList<>();
        for (final TableDescriptor d : published.get("mn1")) {
            final RemoteRegion moved = new RemoteRegion("mn1", d.schema().name(), d.objects().address() + 1_000_000,
                4096, d.objects().rkey() + 50, MemoryKind.HOST);
            replacement.add(new TableDescriptor(d.schema(), moved, moved, moved, 16));
        }
        assertThat(catalog.incarnationOf("mn1")).isZero();
        final List<String> asked = new ArrayList<>();
        assertThat(catalog.reconfigure(without1.rejoin(1, 1), mn -> {
            asked.add(mn);
            return replacement;
        })).isTrue();
        assertThat(asked).as("only the node that comes back").containsExactly("mn1");
        assertThat(catalog.incarnationOf("mn1")).isEqualTo(1);
        assertThat(catalog.incarnationOf("mn0")).isZero();
        // p1 (loaded on mn1) is served by its promoted backup on mn2, mn1's new copy behind it; p0's backup on mn1.
        final Catalog.Partition p1 = catalog.table("accounts").partitionOf(1);
        assertThat(p1.node()).isEqualTo("mn2");
        assertThat(p1.descriptor()).isEqualTo(published.get("mn2").get(1));
        assertThat(p1.backups()).containsExactly(new Catalog.Replica("mn1", replacement.get(0)));
        assertThat(catalog.table("accounts").partitionOf(0).backups())
            .containsExactly(new Catalog.Replica("mn1", replacement.get(1)));
        assertThat(catalog.servingOf("mn1", 7).partition()).as("redo entries naming p1 as loaded find it").isEqualTo(p1);

        final Catalog other = Catalog.fromMemoryNodes(NODES, published);
        other.reconfigure(without1);
        assertThatThrownBy(() -> other.reconfigure(without1.rejoin(1, 1), mn -> replacement.subList(0, 1)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("memory node mn1 rejoined without table accounts.backup1");

        // All or nothing (review, stop 40): the replacement's tables fit, the configuration does not (4 partitions
        // for 3): nothing of the replacement applies, and the node's incarnation stays (before: it went up, and loops
        // dropped their channels to tables not published).
        final Catalog third = Catalog.fromMemoryNodes(NODES, published);
        third.reconfigure(without1);
        final Catalog.Partition before = third.table("accounts").partitionOf(0);
        assertThatThrownBy(() -> third.reconfigure(MemoryNodeConfiguration.initial(4, 1).without(3).rejoin(3, 1),
            mn -> replacement)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions");
        assertThat(third.incarnationOf("mn1")).isZero();
        assertThat(third.epoch()).isEqualTo(without1.epoch());
        assertThat(third.table("accounts").partitionOf(0)).isEqualTo(before);
        assertThat(third.reconfigure(without1.rejoin(1, 1), mn -> replacement)).as("then the right one applies").isTrue();
        assertThat(third.incarnationOf("mn1")).isEqualTo(1);
    }

    /**
     * A loop that sees a memory node removed finds the configuration that removed it, and the copies serving now
     * (issue 18, CI 192: a loop polling {@code TxnRuntime#removedWithin} while a worker thread applied the
     * configuration saw mn2 removed, finished a decided commit on the copies {@link Catalog#servingOf} named, still
     * mn2's, and gave up). Without the fix (removed published first) a reader spinning beside the reconfiguring thread
     * sees the half-applied catalog within a few hundred rounds; it gets 64 tables so the window is wide.
     */
    @Test
    void shouldNotTellANodeRemovedBeforeTheCopiesServingWithoutItAreInPlace() throws Exception {
        final Map<String, List<TableDescriptor>> many = new LinkedHashMap<>();
        for (final String node : NODES) {
            many.put(node, new ArrayList<>());
        }
        for (int t = 0; t < 64; t++) {
            tables("t" + t, 2, 10 + t).forEach((node, held) -> many.get(node).addAll(held));
        }
        final MemoryNodeConfiguration without2 = MemoryNodeConfiguration.initial(3, 2).without(2);
        final List<String> torn = new java.util.concurrent.CopyOnWriteArrayList<>();
        final long until = System.nanoTime() + 3_000_000_000L;
        int rounds = 0;
        while (rounds < 3_000 && System.nanoTime() < until && torn.isEmpty()) {
            rounds++;
            final Catalog catalog = Catalog.fromMemoryNodes(NODES, many);
            final java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
            final Thread reader = new Thread(() -> {
                reading.countDown();
                while (!catalog.removed("mn2")) {
                    Thread.onSpinWait();
                }
                // What RedoStep#finishOnServingCopies reads once removedWithin says so.
                final Catalog.Serving promoted = catalog.servingOf("mn2", 10);
                final Catalog.Serving kept = catalog.servingOf("mn0", 10);
                if (catalog.epoch() != 1 || promoted.partition().node().equals("mn2")
                    || kept.partition().backups().stream().anyMatch(r -> r.node().equals("mn2"))) {
                    torn.add("epoch " + catalog.epoch() + ", mn2's partition served by " + promoted.partition().node()
                        + ", mn0's backups " + kept.partition().backups());
                }
            });
            reader.start();
            reading.await();
            assertThat(catalog.reconfigure(without2)).isTrue();
            reader.join(10_000);
            assertThat(reader.isAlive()).isFalse();
        }
        assertThat(torn).as("a removed node seen with the copies of before, in " + rounds + " rounds").isEmpty();
    }

    /** What 3 memory nodes publish for one table with {@code backups} backups per partition. */
    private static Map<String, List<TableDescriptor>> tables(final String name, final int backups) {
        return tables(name, backups, 7);
    }

    /** {@link #tables(String, int)} of a table whose schema has id {@code id}. */
    private static Map<String, List<TableDescriptor>> tables(final String name, final int backups, final int id) {
        final TableSchema schema = new TableSchema(id, name, 64, true, 1024, io.scythe.storage.IndexKind.HASH, 0,
            false);
        final Map<String, List<TableDescriptor>> of = new LinkedHashMap<>();
        for (int node = 0; node < NODES.size(); node++) {
            final List<TableDescriptor> held = new ArrayList<>();
            held.add(descriptor(NODES.get(node), schema));
            for (int b = 1; b <= backups; b++) {
                held.add(descriptor(NODES.get(node), BackupTables.schemaOf(schema, b)));
            }
            of.put(NODES.get(node), held);
        }
        return of;
    }

    private static TableDescriptor descriptor(final String node, final TableSchema schema) {
        final RemoteRegion region = new RemoteRegion(node, schema.name(), 4096L * schema.id(), 4096, schema.id(),
            MemoryKind.HOST);
        return new TableDescriptor(schema, region, region, region, 16);
    }
}
