package io.scythe.txn.aurogon;

import io.scythe.storage.BackupTables;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.OneMemoryNode;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A promoted backup copy (memory-node failover) against REPLICATE requests that name it, over RRPC. */
class AurogonPromotionTest {
    private static final int KEY_A = 1;
    private static final int KEY_B = 2;

    static boolean pendingAt(final Participant participant, final int table, final long key, final long ts) {
        final long[][] rows = participant.versions(table, key);
        if (rows != null) {
            for (final long[] row : rows) {
                if (row[0] == ts && row[2] == 1) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Backup 1 of {@code node}'s table, keys 0-15 loaded with 100. */
    static Table backupCopy(final OneMemoryNode node) {
        final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
        final UnsafeBuffer hundred = new UnsafeBuffer(new byte[8]);
        hundred.putLong(0, 100);
        for (long k = 0; k < 16; k++) {
            copy.insert(k, hundred, 0, 8, ObjectLayout.LOADED_VERSION);
        }
        return copy;
    }

    static <T> T onLoop(final OneMemoryNode node, final java.util.function.Supplier<T> body) throws Exception {
        final Promise<T> done = Promise.promise();
        node.loop.runOnContext(v -> done.complete(body.get()));
        return done.future().await(10, TimeUnit.SECONDS);
    }

    static UnsafeBuffer replicate(final int table, final long key, final long ts, final long txnId,
                                          final long value) {
        final UnsafeBuffer part = new UnsafeBuffer(new byte[AurogonRpc.REPLICATE_HEADER_BYTES + 8]);
        CoordinatorRecovery.fill(part, table, 8, key, ts);
        part.putInt(AurogonRpc.REPLICATE_EXPECTED_OFFSET, 1);
        part.putInt(AurogonRpc.REPLICATE_OFFSET_OFFSET, 0);
        part.putLong(AurogonRpc.REPLICATE_MASK_OFFSET, 1);
        part.putLong(AurogonRpc.REPLICATE_TXN_OFFSET, txnId);
        part.putLong(AurogonRpc.REPLICATE_LOW_OFFSET, ts); // its coordinator's oldest open: itself
        part.putLong(AurogonRpc.REPLICATE_HEADER_BYTES, value);
        return part;
    }

    /**
     * Cluster nodes fail an Aurogon memory node over (MemoryNodeContext.Promotion) for the 2LClock protocols only:
     * the others' clocks have no bound the read floor can take, and they are refused naming why; other modules'
     * protocols are not refused by it.
     */
    @Test
    void shouldFailOverOnClusterNodesWith2LClockOnly() {
        final AurogonModule module = new AurogonModule();
        assertThat(module.replicates()).isTrue();
        assertThat(module.clusterMemoryNodeFailoverRefusal(AurogonModule.AUROGON)).isNull();
        assertThat(module.clusterMemoryNodeFailoverRefusal(AurogonModule.AUROGON_2L)).isNull();
        assertThat(module.clusterMemoryNodeFailoverRefusal(AurogonModule.DST_TO)).contains("no such bound");
        assertThat(module.clusterMemoryNodeFailoverRefusal(AurogonModule.AUROGON_HOST_CLOCK)).contains("HOST");
        assertThat(module.clusterMemoryNodeFailoverRefusal(io.scythe.txn.spi.ProtocolRegistry.protocol("scythe")))
            .isNull();
        // The bound: 2LClock's error, plus how far the configured NIC clocks may be apart; none when they drift apart.
        assertThat(AurogonModule.clusterClockBoundNs(new io.scythe.fabric.ClockOptions()))
            .isEqualTo(AurogonModule.CLUSTER_2LCLOCK_ERROR_NS);
        assertThat(AurogonModule.clusterClockBoundNs(new io.scythe.fabric.ClockOptions().spread(
            new io.scythe.fabric.ClockDeviation(100, 0), io.scythe.fabric.ClockDeviation.NONE)))
            .isEqualTo(AurogonModule.CLUSTER_2LCLOCK_ERROR_NS + 200);
        assertThatThrownBy(() -> AurogonModule.clusterClockBoundNs(new io.scythe.fabric.ClockOptions().spread(
            new io.scythe.fabric.ClockDeviation(100, 20), io.scythe.fabric.ClockDeviation.NONE)))
            .hasMessageContaining("not synchronised");
        // Overrides on both sides of the default: mn1 5 ms ahead, mn2 5 ms behind are 10 ms apart.
        assertThat(AurogonModule.clusterClockBoundNs(new io.scythe.fabric.ClockOptions()
            .nodeNic("mn1", new io.scythe.fabric.ClockDeviation(5_000_000, 0))
            .nodeNic("mn2", new io.scythe.fabric.ClockDeviation(-5_000_000, 0))))
            .isEqualTo(AurogonModule.CLUSTER_2LCLOCK_ERROR_NS + 10_000_000);
        // A drift every NIC clock shares still parts them: each drifts from its own start.
        assertThatThrownBy(() -> AurogonModule.clusterClockBoundNs(new io.scythe.fabric.ClockOptions()
            .nic(new io.scythe.fabric.ClockDeviation(0, 20)))).hasMessageContaining("not synchronised");
    }

    /**
     * A replacement memory node process is born at its NIC clock plus the clocks' bound; with drifting (unbounded)
     * clocks it is refused at its start, loudly, naming the node (review, stop 45). Fails before: born at
     * Long.MAX_VALUE, every recovery touching it took the lost-share path for good.
     */
    @Test
    void shouldRefuseAReplacementWhileTheClocksDrift() {
        final AurogonModule module = new AurogonModule();
        assertThat(module.replacementFloor("aurogon", "mn1", 5_000_000, new io.scythe.fabric.ClockOptions()))
            .isEqualTo(ParticipantService.clusterFloor(5_000_000, AurogonModule.CLUSTER_2LCLOCK_ERROR_NS));
        final io.scythe.fabric.ClockOptions drifting = new io.scythe.fabric.ClockOptions()
            .nic(new io.scythe.fabric.ClockDeviation(0, 20)); // conf/fabric/clocks.yaml's NIC drift
        assertThatThrownBy(() -> module.replacementFloor("aurogon", "mn1", 5_000_000, drifting))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("refuses replacement memory node mn1").hasMessageContaining("not synchronised");
        // Another module's protocol: the participant serves nothing, the replacement is not refused (review: every
        // scythe or ford-occ replacement failed at start under that profile).
        assertThat(module.replacementFloor("scythe", "mn1", 5_000_000, drifting)).isEqualTo(Long.MAX_VALUE);
        assertThat(module.replacementFloor("ford-occ", "mn1", 5_000_000, drifting)).isEqualTo(Long.MAX_VALUE);
    }

    /**
     * The floor rule of a cluster node's promotion: the dead primary answered a read at T, a timestamp its coordinator
     * took before the promotion from a clock up to the bound ahead of the promoting node's NIC clock; the promoted
     * copy then refuses a write below T (the read saw the version below it), and admits one above the floor. Before
     * the promotion the copy answers a coordinator's READ and INSTALL NOT_PRIMARY (its catalog may name it first).
     * Fails with the floor off (promoteOnCluster flooring at the clock alone, or not at all: the write below T goes
     * in under the read).
     */
    @Test
    void shouldRefuseOnThePromotedCopyAWriteBelowAReadTheDeadPrimaryAnswered() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int table = backupCopy(node).schema().id();
            final long bound = 5_000_000_000L; // a coordinator clock seconds ahead: the floor alone (bound 0) is below T
            final io.scythe.fabric.Nic nic = node.services.db().nic();
            // The dead primary answered a read at T: its coordinator's clock was ahead of this node's by the bound.
            final long readAt = AurogonTimestamp.pack(nic.nicClockNs() + bound - 1, 3, 0);
            final int before = node.on(rt -> rt.rocket("mn").compose(rocket -> {
                final UnsafeBuffer read = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(read, table, 0, KEY_A, readAt);
                return rocket.call(AurogonRpc.READ, read);
            }).map(reply -> reply.payload().getInt(0)));
            assertThat(before).as("not served before its promotion").isEqualTo(Participant.NOT_PRIMARY);
            assertThat(service.servesAsPrimary(node.table.schema().id())).isTrue();
            // A set naming a table that is no backup here is refused before any copy of it is changed.
            final Set<Integer> mixed = new java.util.LinkedHashSet<>(List.of(table, node.table.schema().id()));
            assertThat(onLoop(node, () -> {
                try {
                    service.promote(mixed, AurogonTimestamp.pack(nic.nicClockNs() + bound, 0, 0));
                    return "promoted";
                } catch (final IllegalArgumentException e) {
                    return "refused";
                }
            })).isEqualTo("refused");
            assertThat(service.servesAsPrimary(table)).as("nothing half promoted").isFalse();
            final long floor = onLoop(node, () -> service.promoteOnCluster(Set.of(table), nic.nicClockNs(), bound));
            assertThat(floor).isGreaterThanOrEqualTo(readAt);
            assertThat(service.servesAsPrimary(table)).isTrue();
            final long below = AurogonTimestamp.pack(AurogonTimestamp.clockNs(readAt) - 1_000, 4, 0);
            final int refused = onLoop(node, () -> participant.install(table, KEY_A, below));
            assertThat(refused).as("a write below the read the dead primary answered").isEqualTo(Participant.REFUSED);
            final long above = AurogonTimestamp.pack(AurogonTimestamp.clockNs(floor) + 1, 4, 0);
            assertThat((int) onLoop(node, () -> participant.install(table, KEY_B, above))).isEqualTo(Participant.OK);
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * Two transactions held in full by the backup (writes to keys 1 and 2 of its copy) are adopted as pending versions
     * when the copy is promoted. A reposted part of one (its coordinator alive, its first reply lost) is held as on
     * any backup, the adopted version left to the transaction's deciders (issue 20, aurofix: it was discarded and
     * FENCED, which refused a recovery's APPLY part-way through committing it): the first one's DISCARD rolls its
     * adopted version back (a reader parked on it gets the committed value), the second one's APPLY after its repost
     * commits it. A REPLICATE of a transaction not held here names the dead primary's partition: FENCED, nothing held.
     */
    @Test
    void shouldLeaveAHeldTransactionsAdoptedVersionsToItsDecidersWhenAPartIsRepostedToThePromotedCopy()
        throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int table = backupCopy(node).schema().id();
            final long t1 = AurogonTimestamp.pack(1_000_000, 1, 0);
            final long t2 = AurogonTimestamp.pack(1_000_500, 2, 0);
            final long reader = AurogonTimestamp.pack(2_000_000, 3, 0);
            final List<Integer> statuses = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(
                AurogonRpc.REPLICATE, replicate(table, KEY_A, t1, 11, 111)).compose(a -> rocket.call(
                AurogonRpc.REPLICATE, replicate(table, KEY_B, t2, 22, 222)).map(b -> List.of(
                    a.payload().getInt(0), b.payload().getInt(0))))));
            assertThat(statuses).containsExactly(Backups.OK, Backups.OK);
            onLoop(node, () -> {
                service.promote(Set.of(table), t2);
                return null;
            });
            assertThat(pendingAt(participant, table, KEY_A, t1)).as("adopted").isTrue();
            assertThat(pendingAt(participant, table, KEY_B, t2)).as("adopted").isTrue();
            // A reader above the first transaction parks on its adopted version.
            final List<String> answers = new ArrayList<>();
            onLoop(node, () -> {
                participant.read(table, KEY_A, reader, 0, (status, wts, value) ->
                    answers.add(status + " " + (value == null ? "-" : new UnsafeBuffer(value).getLong(0))));
                return null;
            });
            assertThat(answers).as("parked on the adopted version").isEmpty();
            final int reposted = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                replicate(table, KEY_A, t1, 11, 111))).map(reply -> reply.payload().getInt(0)));
            assertThat(reposted).as("a repost of a part held in full").isEqualTo(Backups.OK);
            assertThat(pendingAt(participant, table, KEY_A, t1)).as("left to its deciders").isTrue();
            assertThat(service.backups().held(t1)).isTrue();
            assertThat(answers).isEmpty();
            final int discarded = node.on(rt -> rt.rocket("mn").compose(rocket -> {
                final UnsafeBuffer discard = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(discard, 0, 0, 0, t1);
                return rocket.call(AurogonRpc.DISCARD, discard);
            }).map(reply -> reply.payload().getInt(0)));
            assertThat(discarded).isEqualTo(Backups.OK);
            assertThat(pendingAt(participant, table, KEY_A, t1)).as("rolled back").isFalse();
            assertThat(answers).as("the parked reader gets the loaded value").containsExactly(
                Participant.OK + " 100");
            assertThat(service.backups().held(t1)).as("the held writes dropped").isFalse();
            assertThat(pendingAt(participant, table, KEY_B, t2)).as("the other transaction untouched").isTrue();
            // A repost of the second's part, then a recovery's APPLY (it found every backup FULL): committed here.
            final int early = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                replicate(table, KEY_B, t2, 22, 222))).map(reply -> reply.payload().getInt(0)));
            assertThat(early).isEqualTo(Backups.OK);
            final int applied = node.on(rt -> rt.rocket("mn").compose(rocket -> {
                final UnsafeBuffer apply = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(apply, 0, 0, 0, t2);
                return rocket.call(AurogonRpc.APPLY, apply);
            }).map(reply -> reply.payload().getInt(0)));
            assertThat(applied).isEqualTo(Backups.OK);
            assertThat(pendingAt(participant, table, KEY_B, t2)).as("committed by its APPLY").isFalse();
            assertThat(participant.versions(table, KEY_B)[0][0]).isEqualTo(t2);
            // Its coordinator's repost of the part (its first reply late; review of aurosplit4, 7): a recovery
            // committed it, so COMMITTED, not FENCED (its client told "unknown" of a committed transaction), and the
            // committed version stays. Failed before: FENCED.
            final int repost = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                replicate(table, KEY_B, t2, 22, 222))).map(reply -> reply.payload().getInt(0)));
            assertThat(repost).isEqualTo(Backups.COMMITTED);
            assertThat(service.backups().committedReposts()).isEqualTo(1);
            assertThat(participant.versions(table, KEY_B)[0][0]).isEqualTo(t2);
            // Another transaction at that timestamp (a reused coordinator id) is fenced, not told committed.
            final int other = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                replicate(table, KEY_B, t2, 23, 222))).map(reply -> reply.payload().getInt(0)));
            assertThat(other).isEqualTo(Backups.FENCED);
            // A transaction not held here: its attempt looked the dead primary up and installed there only.
            final long t3 = AurogonTimestamp.pack(2_500_000, 1, 0);
            final int fresh = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                replicate(table, KEY_A, t3, 33, 333))).map(reply -> reply.payload().getInt(0)));
            assertThat(fresh).isEqualTo(Backups.FENCED);
            assertThat(service.backups().held(t3)).isFalse();
            assertThat(participant.violation()).isNull();
        }
    }

    /** {@code rpc} (DISCARD or APPLY) of the transaction at {@code ts} at the node, its status. */
    static int decide(final OneMemoryNode node, final int rpc, final long ts) throws Exception {
        return node.on(rt -> rt.rocket("mn").compose(rocket -> {
            final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(request, 0, 0, 0, ts);
            return rocket.call(rpc, request);
        }).map(reply -> reply.payload().getInt(0)));
    }

    static int replicateAt(final OneMemoryNode node, final UnsafeBuffer part) throws Exception {
        return node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE, part))
            .map(reply -> reply.payload().getInt(0)));
    }

    /**
     * Issue 20 (aurotomb): tombstones live only on the primary that got the ROLLBACK, and adopt() does not consult
     * them, so can a backup that never saw the ROLLBACK adopt the rolled-back write when it is promoted, or hold a
     * late REPLICATE of it? No: a coordinator's abort, and a recovery's roll-back, marks the DISCARD at every backup
     * it replicated to before any ROLLBACK goes out (AurogonTxn#abort, CoordinatorRecovery#mark), and a REPLICATE is
     * sent only once every INSTALL was acknowledged. So a ROLLBACK reaching a primary finds every live backup fenced:
     * the DISCARD of a transaction never held here fences it (a late REPLICATE is then FENCED), that of one held drops
     * it, and the promotion adopts neither (only transactions held in full and undecided). A ROLLBACK without a
     * DISCARD (an attempt that aborted before it replicated) has nothing at any backup, nor will have. Here the
     * backup's side of both orders, then the promotion and the same late REPLICATEs at the promoted copy.
     */
    @Test
    void shouldNeverAdoptOrHoldATransactionRolledBackBeforeThePromotion() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int table = backupCopy(node).schema().id();
            final long late = AurogonTimestamp.pack(1_000_000, 1, 0); // its REPLICATE behind its DISCARD
            final long held = AurogonTimestamp.pack(1_000_500, 2, 0); // held in full, then discarded
            final long live = AurogonTimestamp.pack(1_001_000, 3, 0); // held in full, undecided
            assertThat(decide(node, AurogonRpc.DISCARD, late)).as("the abort's DISCARD first").isEqualTo(Backups.OK);
            assertThat(replicateAt(node, replicate(table, KEY_A, late, 11, 111))).as("the late REPLICATE")
                .isEqualTo(Backups.FENCED);
            assertThat(replicateAt(node, replicate(table, KEY_B, held, 22, 222))).isEqualTo(Backups.OK);
            assertThat(decide(node, AurogonRpc.DISCARD, held)).isEqualTo(Backups.OK);
            assertThat(replicateAt(node, replicate(table, KEY_B, held, 22, 222))).as("its repost, late")
                .isEqualTo(Backups.FENCED);
            assertThat(replicateAt(node, replicate(table, 3, live, 33, 333))).isEqualTo(Backups.OK);
            assertThat(service.backups().held(late) || service.backups().held(held)).isFalse();
            onLoop(node, () -> {
                service.promote(Set.of(table), live);
                return null;
            });
            assertThat(pendingAt(participant, table, KEY_A, late)).as("never held: not adopted").isFalse();
            assertThat(pendingAt(participant, table, KEY_B, held)).as("discarded: not adopted").isFalse();
            assertThat(pendingAt(participant, table, 3, live)).as("held and undecided: adopted").isTrue();
            // The late REPLICATEs once more, now at the promoted copy: still refused, nothing pending.
            assertThat(replicateAt(node, replicate(table, KEY_A, late, 11, 111))).isEqualTo(Backups.FENCED);
            assertThat(replicateAt(node, replicate(table, KEY_B, held, 22, 222))).isEqualTo(Backups.FENCED);
            assertThat(pendingAt(participant, table, KEY_A, late) || pendingAt(participant, table, KEY_B, held))
                .isFalse();
            final long[][] a = participant.versions(table, KEY_A);
            final long[][] b = participant.versions(table, KEY_B);
            // No version at the rolled-back timestamps, pending or committed (others, e.g. the loaded one, may stay).
            assertThat(a == null || Arrays.stream(a).noneMatch(v -> v[0] == late)).as("a version at late: "
                + Arrays.deepToString(a)).isTrue();
            assertThat(b == null || Arrays.stream(b).noneMatch(v -> v[0] == held)).as("a version at held: "
                + Arrays.deepToString(b)).isTrue();
            assertThat(participant.violation()).isNull();
        }
    }

    /** A COPY request: the primary's newest committed version of {@code key} ({@code value} null: deleted). */
    static UnsafeBuffer copyRequest(final int table, final long key, final long wts, final Long value) {
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + (value == null ? 0 : 8)]);
        CoordinatorRecovery.fill(copy, table, value == null ? AurogonRpc.DELETE : 8, key, wts);
        if (value != null) {
            copy.putLong(AurogonRpc.HEADER_BYTES, value);
        }
        return copy;
    }

    /** {@code key}'s object in {@code t}: {@code [version, value]}, or {@code [version, -1]} when deleted. */
    static long[] object(final OneMemoryNode node, final Table t, final long key) throws Exception {
        return onLoop(node, () -> {
            final int at = t.offsetOf(t.lookup(key));
            final long version = t.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
            final boolean deleted = (t.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
                & ObjectLayout.FLAG_DELETED) != 0;
            return new long[] {version, deleted ? -1 : t.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET)};
        });
    }

    /**
     * Re-replication's W step for Aurogon (issue 20/23): COPY writes the primary's newest committed version into a
     * rejoining copy by the APPLY rule, so a copy racing the APPLY of a newer commit never leaves the older value
     * over it (the race a one-sided image write has: Aurogon's commits lock no header), and an older APPLY arriving
     * after the copy does not lower it either. Fails before COPY exists (no handler) and with a COPY that writes
     * unconditionally (the stale copy at 40 lands over the APPLY at 50).
     */
    @Test
    void shouldCopyOntoARejoiningCopyNeverOverANewerCommit() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Table copy = backupCopy(node);
            final int table = copy.schema().id();
            final long base = 1_000_000_000L;
            final long t30 = AurogonTimestamp.pack(base + 30, 1, 0);
            final long t40 = AurogonTimestamp.pack(base + 40, 1, 0);
            final long t50 = AurogonTimestamp.pack(base + 50, 2, 0);
            final long t60 = AurogonTimestamp.pack(base + 60, 1, 0);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, KEY_A, t30, 7L))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, KEY_A)).containsExactly(t30, 7);
            // A commit at 50 reaches the copy by its APPLY; a copy of the primary read before it (at 40) comes late.
            assertThat(call(node, AurogonRpc.REPLICATE, replicate(table, KEY_A, t50, 77, 9))).isEqualTo(Participant.OK);
            final UnsafeBuffer apply = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(apply, 0, 0, 0, t50);
            assertThat(call(node, AurogonRpc.APPLY, apply)).isEqualTo(Participant.OK);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, KEY_A, t40, 8L))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, KEY_A)).as("the late copy leaves the newer commit").containsExactly(t50, 9);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, KEY_A, t60, null))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, KEY_A)).as("a delete copied as one").containsExactly(t60, -1);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, KEY_B, t40, 5L))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, KEY_B)).containsExactly(t40, 5);
            final UnsafeBuffer torn = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + 3]);
            CoordinatorRecovery.fill(torn, table, 8, KEY_B, t60);
            assertThat(call(node, AurogonRpc.COPY, torn)).as("a length word the bytes do not match").isEqualTo(-1);
            assertThat(object(node, copy, KEY_B)).as("changed nothing").containsExactly(t40, 5);
            // A value the table cannot hold (4 bytes, its values 8) changes nothing either (review, finding 8): key
            // 20, absent here, deleted at 50; before, the bad COPY dropped that delete, so a COPY at 45 revived it.
            final long t45 = AurogonTimestamp.pack(base + 45, 1, 0);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 20, t50, null))).isEqualTo(Participant.OK);
            final UnsafeBuffer shorter = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + 4]);
            CoordinatorRecovery.fill(shorter, table, 4, 20, t60);
            assertThat(call(node, AurogonRpc.COPY, shorter)).as("a length the table refuses").isEqualTo(-1);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 20, t45, 6L))).isEqualTo(Participant.OK);
            assertThat(onLoop(node, () -> copy.lookup(20))).as("still deleted: nothing revived below 50").isZero();
        }
    }

    /**
     * Issue 20, review finding 5: a COPY delayed past the delete-pruning lag. The copier's R1 read key 20 live at 30
     * on the primary; the key's delete at 50 then reached the rejoining copy (a replacement process's) by its APPLY
     * (absent there: only its deletedAt entry records it), and the node's newest timestamp moved 10 ms on, past
     * {@code PRUNE_LAG_NS}. The late COPY of the version at 30 must leave the key absent: the replacement holds its
     * pruning until it rejoined (before, the entry was pruned and the COPY revived the key, live on the copy while
     * the primary freed it). The symmetric case: key 22, read deleted at 30, inserted at 51 after the read: the late
     * COPY of the delete leaves the insert. And key 23, old and live (its version far below every pruned mark), is
     * copied, not refused. Once rejoined, the pruning runs again and a COPY (of an abandoned run) is refused.
     */
    @Test
    void shouldNeverReviveByACopyLaterThanThePruningLagADeleteAppliedAfterItsRead() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Table copy = backupCopy(node);
            final int table = copy.schema().id();
            final ParticipantService service = node.services.service(ParticipantService.class);
            node.services.replacement("aurogon"); // as a host marks a replacement process (ScytheNode)
            // Timestamps after its birth (its NIC clock then plus the bound): a REPLICATE at or below is refused.
            final long base = node.services.db().nic().nicClockNs() + 1_000_000_000L;
            final long t10 = AurogonTimestamp.pack(base + 10, 1, 0);
            final long t30 = AurogonTimestamp.pack(base + 30, 1, 0);
            final long t50 = AurogonTimestamp.pack(base + 50, 2, 0);
            final long later = AurogonTimestamp.pack(base + 50 + 10_000_000, 2, 0);
            CoordinatorRecoveryTest.applied(node, table, 20, t50, null); // after R1 read 20 live at 30
            final long t51 = AurogonTimestamp.pack(base + 51, 2, 0);
            CoordinatorRecoveryTest.applied(node, table, 22, t51, 9L); // after R1 read 22 deleted at 30
            CoordinatorRecoveryTest.applied(node, table, 24, later, null); // 10 ms on: a sweep
            assertThat(onLoop(node, () -> service.deletedAt(table, 20))).as("kept while the copy runs").isEqualTo(t50);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 20, t30, 7L))).isEqualTo(Participant.OK);
            assertThat(onLoop(node, () -> copy.lookup(20))).as("the late copy revives nothing").isZero();
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 22, t30, null))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, 22)).as("the insert after the read stays").containsExactly(t51, 9);
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 23, t10, 5L))).isEqualTo(Participant.OK);
            assertThat(object(node, copy, 23)).as("an old live key is copied").containsExactly(t10, 5);

            node.services.rejoined(); // as the host's configuration watcher says it rejoined
            CoordinatorRecoveryTest.applied(node, table, 25, AurogonTimestamp.pack(base + 50 + 20_000_000, 2, 0),
                null);
            assertThat(onLoop(node, () -> service.deletedAt(table, 20))).as("pruned once rejoined").isZero();
            assertThat(call(node, AurogonRpc.COPY, copyRequest(table, 20, t30, 7L))).as("a COPY after the rejoin")
                .isEqualTo(-1);
            assertThat(onLoop(node, () -> copy.lookup(20))).isZero();
        }
    }

    /**
     * Issue 20/23 review, finding 1 (b): re-replication's R1 treats a version pending at the key's primary as a lock
     * ({@link AurogonRpc#PENDING}, asked through {@code ReplicaWrite#unsettled}): the object holds only the newest
     * committed version, and the pending one's commit (a recovery's, or a coordinator's of an older configuration)
     * reaches the primary only, never the rejoining copy. Here the version pending at 30 is committed (as a
     * recovery commits it: the primary only) when the copier is done or 300 ms into the copy (well past an unheld
     * copy of these 16 keys: under 0.1 s here), whichever comes first;
     * the copier must not write the key before that, and the copy ends with the committed value. Before, the copier
     * copied the older value while the version was pending ("copied while pending") and the copy kept it.
     */
    @Test
    void shouldHoldReReplicationOffAKeyWithAVersionPendingAtItsPrimary() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Table copy = backupCopy(node);
            final int primary = node.table.schema().id();
            final io.scythe.txn.Catalog catalog = new io.scythe.txn.Catalog().add("items", List.of(
                new io.scythe.txn.Catalog.Partition("mn", node.table.describe(),
                    List.of(new io.scythe.txn.Catalog.Replica("mn", copy.describe())))));
            final long t30 = AurogonTimestamp.pack(1_000_000_030L, 1, 0);
            final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(install, primary, 0, KEY_A, t30);
            assertThat(call(node, AurogonRpc.INSTALL, install)).isEqualTo(Participant.OK);
            final UnsafeBuffer question = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(question, primary, 0, KEY_A, 0);
            assertThat(call(node, AurogonRpc.PENDING, question)).isEqualTo(AurogonRpc.PENDING_HELD);
            final Participant participant = node.services.service(ParticipantService.class).participant();
            final List<String> seen = new ArrayList<>();
            final UnsafeBuffer commit = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + 8]);
            CoordinatorRecovery.fill(commit, primary | AurogonRpc.BY_RECOVERY, 8, KEY_A, t30);
            commit.putLong(AurogonRpc.HEADER_BYTES, 42);
            node.onCatalog(catalog, rt -> {
                final Promise<Void> committed = Promise.promise();
                final Runnable decide = () -> {
                    if (!committed.future().isComplete()) {
                        committed.complete();
                        rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.COMMIT, commit))
                            .onComplete(ar -> seen.add(ar.succeeded() ? "committed" : ar.cause().toString()));
                    }
                };
                rt.timers().after(300_000_000).onComplete(x -> decide.run());
                return new io.scythe.txn.recovery.ReReplicator(rt, "aurogon").beforeWrite((table, key) -> {
                    if (key == KEY_A && participant.pending(primary, KEY_A)) {
                        seen.add("copied while pending");
                    }
                    return io.vertx.core.Future.succeededFuture();
                }).copyOnto("mn", 0).onComplete(done -> decide.run()).compose(report -> rt.timers().after(1_000_000))
                    .map(v -> null);
            });
            assertThat(seen).containsExactly("committed");
            assertThat(call(node, AurogonRpc.PENDING, question)).isEqualTo(Participant.OK);
            assertThat(object(node, copy, KEY_A)).as("the committed value, copied").containsExactly(t30, 42);
        }
    }

    /** {@code rpc} with {@code request} to the node: the status answered, -1 for a failure reply. */
    static int call(final OneMemoryNode node, final int rpc, final UnsafeBuffer request) throws Exception {
        return node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(rpc, request))
            .map(reply -> reply.payload().getInt(0)).otherwise(-1));
    }
}
