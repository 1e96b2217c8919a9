package io.scythe.txn.aurogon;

import io.scythe.storage.BackupTables;
import io.scythe.storage.Table;
import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;
import io.scythe.txn.OneMemoryNode;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.scythe.txn.aurogon.AurogonPromotionTest.onLoop;
import static io.scythe.txn.aurogon.AurogonPromotionTest.pendingAt;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link CoordinatorRecovery}'s lost-share path ({@code commitLost}) and COMMITTED_AT, over RRPC on one node. */
class CoordinatorRecoveryTest {
    private static final long KEY_A = 1;
    private static final long KEY_B = 2;
    private static final long KEY_C = 3;
    private static final long LATE_A = 11;
    private static final long LATE_B = 12;
    private static final long LATE_C = 13;
    private static final long LATE_D = 14;
    private static final long LATE_E = 15;
    private static final long LATE_F = 16;

    /** The failure's message, or "ok". */
    private static Future<String> outcome(final Future<Void> f) {
        return f.map(v -> "ok").recover(e -> Future.succeededFuture((e instanceof CoordinatorRecovery.InDoubt
            ? "in doubt: " : "") + e.getMessage()));
    }

    /**
     * (1) A lost share whose surviving backup holds the write of key 1 but not that of key 2, both suspects: key 1 is
     * committed, key 2 stays pending and the recovery fails naming it (it was rolled back silently: a partial commit).
     * (2) No backup answered (id 0), a version committed at the timestamp: committed, nothing reported under id 0,
     * the recovery fails saying so (it reported transaction 0). (3) COMMITTED_AT flags an answer it cut short (it did
     * not: the recovery took a part for the whole).
     */
    @Test
    void shouldLeaveASuspectNoSurvivingBackupWroteInDoubtAndNeverReportIdZero() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 2048)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final long ts = AurogonTimestamp.pack(1_000_000, 1, 0);
            onLoop(node, () -> {
                participant.install(items, KEY_A, ts);
                participant.install(items, KEY_B, ts);
                return null;
            });
            final UnsafeBuffer part = AurogonPromotionTest.replicate(copy.schema().id(), KEY_A, ts, 11, 111);
            final int replicated = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                part)).map(reply -> reply.payload().getInt(0)));
            assertThat(replicated).isEqualTo(Backups.OK);
            final CoordinatorRecovery.Decision d = new CoordinatorRecovery.Decision();
            d.entries.put("mn", 1);
            d.txnId = 11;
            final String lost = node.on(rt -> outcome(CoordinatorRecovery.commitLost(rt, ts, d, "mn",
                List.of(new long[] {items, KEY_A}, new long[] {items, KEY_B}), List.of())));
            assertThat(lost).startsWith("in doubt: ").contains("no surviving backup holds its write of items/2");
            assertThat(pendingAt(participant, items, KEY_A, ts)).as("the held write committed").isFalse();
            assertThat(participant.versions(items, KEY_A)[0][0]).isEqualTo(ts);
            assertThat(pendingAt(participant, items, KEY_B, ts)).as("left in doubt, not rolled back").isTrue();

            final long ts2 = AurogonTimestamp.pack(1_000_500, 2, 0);
            onLoop(node, () -> {
                participant.install(items, KEY_C, ts2);
                return participant.commit(items, KEY_C, ts2, new byte[8]);
            });
            final List<Long> reported = new ArrayList<>();
            final String noId = node.on(rt -> {
                rt.recorder(new HistoryRecorder() {
                    @Override
                    public void committed(final long txnId, final long commitTs, final List<Access> accesses) {
                    }

                    @Override
                    public void inDoubt(final long txnId, final List<Access> accesses) {
                        reported.add(txnId);
                    }
                });
                return outcome(CoordinatorRecovery.commitLost(rt, ts2, new CoordinatorRecovery.Decision(), "mn",
                    List.of(), List.<long[]>of(new long[] {items, KEY_C})));
            });
            assertThat(reported).as("never transaction 0").isEmpty();
            assertThat(noId).contains("id 0 is never recorded");

            final long ts3 = AurogonTimestamp.pack(1_001_000, 3, 0);
            final int many = 1_000;
            onLoop(node, () -> {
                for (long k = 100; k < 100 + many; k++) {
                    participant.install(items, k, ts3);
                    participant.commit(items, k, ts3, new byte[8]);
                }
                return null;
            });
            assertThat(onLoop(node, () -> participant.committedAt(ts3))).hasSize(many);
            final int[] reply = node.on(rt -> rt.rocket("mn").compose(rocket -> {
                final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(request, 0, 0, 0, ts3);
                return rocket.call(AurogonRpc.COMMITTED_AT, request);
            }).map(r -> new int[] {r.payload().getInt(0), r.payload().getInt(4)}));
            assertThat(reply[0]).as("cut short").isLessThan(many);
            assertThat(reply[1]).isEqualTo(AurogonRpc.COMMITTED_AT_TRUNCATED);
        }
    }

    /**
     * A lost share (no live node holds the transaction's replication: one memory node serves every partition, its
     * backups died) whose coordinator is only paused: heard installing the timestamp here, never told dead. No COMMIT
     * found yet is no proof none comes: the recovery leaves both versions pending (in doubt) and the coordinator's
     * COMMITs of both land. Told dead (the host fenced it), the same recovery rolls its next transaction back. Fails
     * before: the recovery rolled both back and the coordinator's COMMIT answered NOT_PENDING (in a chaos run, a COMMIT
     * landing between the recovery's COMMITTED_AT asks and its ROLLBACKs: a partial commit, money not conserved).
     */
    @Test
    void shouldLeaveALostShareToItsCoordinatorUntilItIsToldDead() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final List<long[]> both = List.of(new long[] {items, KEY_A}, new long[] {items, KEY_B});
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0); // server (slot) 1, loop 0
            installOverRpc(node, both, ts);
            final String left = node.on(rt -> outcome(CoordinatorRecovery.lostShare(rt, ts, "mn", both).mapEmpty()));
            assertThat(left).startsWith("in doubt: ").contains("to its coordinator").contains("[mn]");
            for (final long[] r : both) {
                assertThat(pendingAt(participant, items, r[1], ts)).as("left pending for its coordinator").isTrue();
                final UnsafeBuffer commit = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES + 8]);
                CoordinatorRecovery.fill(commit, items, 8, r[1], ts);
                commit.putLong(AurogonRpc.HEADER_BYTES, 77);
                assertThat(send(node, AurogonRpc.COMMIT, commit)).as("the woken coordinator's COMMIT")
                    .isEqualTo(Participant.OK);
            }
            assertThat(onLoop(node, () -> participant.committedAt(ts))).hasSize(2);
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_C}), AurogonTimestamp.pack(5_000_200, 1, 0));
            assertThat(onLoop(node, () -> service.mayStillCommit(ts))).as("nothing pending at ts here any more, though "
                + "its id was heard above it: no COMMIT of it can land (review, stop 45: flagged for good)").isFalse();

            final long next = AurogonTimestamp.pack(5_000_500, 1, 0);
            installOverRpc(node, both, next);
            onLoop(node, () -> service.coordinatorsDied("cn", new long[] {5L << 48 | 1L << 32}));
            final String rolled = node.on(rt -> outcome(CoordinatorRecovery.lostShare(rt, next, "mn", both)
                .mapEmpty()));
            assertThat(rolled).isEqualTo("ok");
            for (final long[] r : both) {
                assertThat(pendingAt(participant, items, r[1], next)).as("rolled back once told dead").isFalse();
                assertThat(participant.versions(items, r[1])[0][0]).as("the commit at ts the newest").isEqualTo(ts);
            }
        }
    }

    /**
     * A replacement memory node asked whether it holds a transaction from before it was born (its predecessor held
     * it, and may have acknowledged it in full: a paused coordinator may have decided to commit on it): it answers
     * NOT_HERE and fences nothing, and the recovery takes the share as lost (the lost-share path, which leaves a
     * coordinator not known dead its transaction). Above the floor it was born at, a timestamp it holds nothing of is
     * fenced (ABORTED) as on any node. Fails before (review, stop 45): ABORTED, the recovery rolled the transaction
     * back while the woken coordinator's COMMITs landed elsewhere (a partial commit, its client told committed).
     */
    @Test
    void shouldTakeAReplacementsShareOfATransactionFromBeforeItWasBornAsLost() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final long before = AurogonTimestamp.pack(5_000_000, 1, 0);
            final long after = AurogonTimestamp.pack(7_000_000, 1, 0);
            onLoop(node, () -> {
                service.replacement(AurogonTimestamp.pack(6_000_000, AurogonTimestamp.MAX_SERVER,
                    AurogonTimestamp.MAX_LOOP));
                return null;
            });
            assertThat(send(node, AurogonRpc.HOLDS, request(before))).as("its predecessor's: unknown here")
                .isEqualTo(Backups.NOT_HERE);
            final CoordinatorRecovery.Decision d = node.on(rt -> CoordinatorRecovery.decide(rt, before, List.of("mn")));
            assertThat(d.lost).as("the share taken as lost").isTrue();
            assertThat(d.commit).as("not decided as a rollback").isTrue();
            assertThat(send(node, AurogonRpc.HOLDS, request(before))).as("nothing fenced (a REPLICATE of it is refused"
                + " STALE: shouldRefuseAZombiesReplicateOnAReplacementThatAnsweredNotHere)")
                .isEqualTo(Backups.NOT_HERE);
            assertThat(send(node, AurogonRpc.HOLDS, request(after))).as("born before it: fenced as anywhere")
                .isEqualTo(Backups.ABORTED);
        }
    }

    /**
     * A catalog configuration in which a replaced memory node's replacement rejoined: every node is live again, so
     * {@link CoordinatorRecovery#copiesSurvive} counts f+1 copies, but the replacement answers HOLDS of a transaction
     * from before it was born NOT_HERE (what its predecessor held died with it). The lost-share recovery must not take
     * the f+1 shortcut then: (1) nothing committed and the coordinator not told dead: both versions left pending to
     * it (in doubt); (2) the coordinator's COMMIT of one key landed: the other, whose write no surviving backup holds,
     * is left in doubt, never rolled back as "never written". Fails without {@code f0b719c9}'s condition: the
     * shortcut rolled both back in (1), and rolled back key 2 beside the committed key 1 in (2) (a partial commit).
     */
    @Test
    void shouldNotTakeTheCopiesShortcutWhenARejoinedReplacementAnswersNotHere() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            // Two partitions (a configuration needs a node more than its backups), each served here with a backup
            // copy here; epoch 1 removes nobody: the replaced node's replacement rejoined.
            final io.scythe.txn.Catalog.Partition backed = new io.scythe.txn.Catalog.Partition("mn",
                node.table.describe(), List.of(new io.scythe.txn.Catalog.Replica("mn", copy.describe())));
            final io.scythe.txn.Catalog catalog = new io.scythe.txn.Catalog().add("items", List.of(backed, backed));
            assertThat(catalog.reconfigure(new io.scythe.txn.MemoryNodeConfiguration(1,
                List.of(List.of(0, 1), List.of(0, 1)), java.util.Set.of()))).isTrue();
            assertThat(CoordinatorRecovery.copiesSurvive(catalog)).as("the rejoined node a live copy").isTrue();
            final List<long[]> both = List.of(new long[] {items, KEY_A}, new long[] {items, KEY_B});
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0);
            installOverRpc(node, both, ts);
            onLoop(node, () -> {
                service.replacement(AurogonTimestamp.pack(6_000_000, AurogonTimestamp.MAX_SERVER,
                    AurogonTimestamp.MAX_LOOP));
                return null;
            });
            assertThat(send(node, AurogonRpc.HOLDS, request(ts))).isEqualTo(Backups.NOT_HERE);

            final String left = node.onCatalog(catalog, rt -> outcome(CoordinatorRecovery.lostShare(rt, ts, "mn",
                both).mapEmpty()));
            assertThat(left).startsWith("in doubt: ").contains("to its coordinator");
            for (final long[] r : both) {
                assertThat(pendingAt(participant, items, r[1], ts)).as("left to its live coordinator").isTrue();
            }

            assertThat(onLoop(node, () -> participant.commit(items, KEY_A, ts, new byte[8])))
                .as("the coordinator's COMMIT of key 1").isEqualTo(Participant.OK);
            final List<long[]> rest = List.<long[]>of(new long[] {items, KEY_B});
            final String lost = node.onCatalog(catalog, rt -> outcome(CoordinatorRecovery.lostShare(rt, ts, "mn",
                rest).mapEmpty()));
            assertThat(lost).startsWith("in doubt: ").contains("its commit reached a primary");
            assertThat(pendingAt(participant, items, KEY_B, ts)).as("never rolled back beside a commit").isTrue();
            assertThat(participant.versions(items, KEY_A)[0][0]).isEqualTo(ts);
        }
    }

    /**
     * {@link #shouldNotTakeTheCopiesShortcutWhenARejoinedReplacementAnswersNotHere} with the primaries and the
     * replacement on different nodes: three nodes, partition p's primary on the p-th and its backup on the next
     * (mn0 -> mn1 -> mn2 -> mn0), mn1 a replacement born after the transaction. It writes key 3 (primary mn0, backup
     * mn1: lost with mn1's predecessor) and key 2 (primary mn2, backup mn0: survives). mn0 holds its share in full,
     * mn1 answers NOT_HERE. (1) No COMMIT landed, the coordinator not told dead: left to it on both primaries. (2) The
     * coordinator's COMMIT of key 2 landed on mn2: the recovery of mn0's suspect applies mn0's share (key 2, committed
     * already) and leaves key 3, whose only backup died, in doubt, pending, never rolled back beside the commit. The
     * one-node case never gets here (no backup survives there: {@code commitLost} is in doubt before any APPLY);
     * this reaches {@code commitMarked}'s strict check. Node "mn" plays mn0. Fails with the NOT_HERE condition on the
     * f+1 shortcut removed (phase 1 commits mn0's share and rolls key 3 back), and with the strict check removed
     * (phase 2 rolls key 3 back beside key 2's commit).
     */
    @Test
    void shouldApplyASurvivingShareAndLeaveTheLostOneInDoubtWithTheReplacementOnAnotherNode() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final io.scythe.txn.mn.MemoryNodeServices[] mns = {node.services, node.another("mn1"),
                node.another("mn2")};
            final String[] names = {"mn", "mn1", "mn2"};
            final io.scythe.storage.TableSchema schema = node.table.schema();
            final int items = schema.id();
            final Table[] copies = new Table[3];
            final List<io.scythe.txn.Catalog.Partition> partitions = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                copies[(p + 1) % 3] = mns[(p + 1) % 3].db().create(BackupTables.schemaOf(schema, 1));
                partitions.add(new io.scythe.txn.Catalog.Partition(names[p], mns[p].db().table("items").describe(),
                    List.of(new io.scythe.txn.Catalog.Replica(names[(p + 1) % 3], copies[(p + 1) % 3].describe()))));
            }
            final io.scythe.txn.Catalog catalog = new io.scythe.txn.Catalog().add("items", partitions);
            // Epoch 1 removes nobody: mn1's replacement rejoined (its copies back as backups).
            assertThat(catalog.reconfigure(new io.scythe.txn.MemoryNodeConfiguration(1,
                List.of(List.of(0, 1), List.of(0, 1), List.of(0, 1)), java.util.Set.of()))).isTrue();
            assertThat(CoordinatorRecovery.copiesSurvive(catalog)).as("mn1 a live copy").isTrue();
            final ParticipantService replacement = mns[1].service(ParticipantService.class);
            node.onLoop(() -> {
                replacement.replacement(AurogonTimestamp.pack(6_000_000, AurogonTimestamp.MAX_SERVER,
                    AurogonTimestamp.MAX_LOOP));
                return Future.<Void>succeededFuture();
            });
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0);
            final Participant mn0 = node.services.service(ParticipantService.class).participant();
            final Participant mn2 = mns[2].service(ParticipantService.class).participant();
            final List<Integer> sent = node.on(rt -> {
                final List<Future<Integer>> calls = new ArrayList<>();
                for (final Object[] c : new Object[][] {{"mn", 3L}, {"mn2", 2L}}) {
                    final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                    CoordinatorRecovery.fill(install, items, 0, (Long) c[1], ts);
                    calls.add(rt.rocket((String) c[0]).compose(rocket -> rocket.call(AurogonRpc.INSTALL, install))
                        .map(r -> r.payload().getInt(0)));
                }
                // mn0's share in full: key 2's write (mn1's predecessor held key 3's; the mask names both nodes).
                final UnsafeBuffer part = AurogonPromotionTest.replicate(copies[0].schema().id(), 2, ts, 51, 20);
                part.putLong(AurogonRpc.REPLICATE_MASK_OFFSET, 0b11);
                calls.add(rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE, part))
                    .map(r -> r.payload().getInt(0)));
                return Future.all(calls).map(all -> all.<Integer>list());
            });
            assertThat(sent).as("installed, replicated").containsExactly(Participant.OK, Participant.OK, Backups.OK);
            final int atReplacement = node.on(rt -> rt.rocket("mn1").compose(rocket -> rocket.call(AurogonRpc.HOLDS,
                request(ts))).map(r -> r.payload().getInt(0)));
            assertThat(atReplacement).as("the replacement").isEqualTo(Backups.NOT_HERE);

            final List<long[]> suspects = List.<long[]>of(new long[] {items, 3});
            final String left = node.onCatalog(catalog, rt -> outcome(CoordinatorRecovery.lostShare(rt, ts, "mn",
                suspects).mapEmpty()));
            assertThat(left).startsWith("in doubt: ").contains("to its coordinator");
            assertThat(pendingAt(mn0, items, 3, ts)).as("left to its live coordinator").isTrue();
            assertThat(pendingAt(mn2, items, 2, ts)).isTrue();

            final byte[] twenty = new byte[8];
            new UnsafeBuffer(twenty).putLong(0, 20);
            assertThat(onLoop(node, () -> mn2.commit(items, 2, ts, twenty))).as("the coordinator's COMMIT of key 2")
                .isEqualTo(Participant.OK);
            final String lost = node.onCatalog(catalog, rt -> outcome(CoordinatorRecovery.lostShare(rt, ts, "mn",
                suspects).mapEmpty()));
            assertThat(lost).startsWith("in doubt: ").contains("no surviving backup holds its write of items/3");
            assertThat(pendingAt(mn0, items, 3, ts)).as("never rolled back beside a commit").isTrue();
            assertThat(onLoop(node, () -> mn2.versions(items, 2)[0][2])).as("key 2 stays committed").isZero();
            final int applied = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.HOLDS,
                request(ts))).map(r -> r.payload().getInt(0)));
            assertThat(applied).as("mn0's share applied").isEqualTo(Backups.COMMITTED);
        }
    }

    /**
     * A zombie coordinator's REPLICATE reaching a replacement memory node after it answered a recovery's HOLDS
     * NOT_HERE and before any DISCARD (the coordinator paused since before the predecessor died, its part reposted or
     * late): the replacement has no record of the transaction and makes none. Refused STALE with a floor at or above
     * its birth floor, nothing held: HOLDS still answers NOT_HERE (and a DISCARD after it changes nothing of that).
     * A REPLICATE above the birth floor is held as on any backup. Fails before: the part was held (OK) and HOLDS
     * then answered FULL, so a second resolver could commit, from "every backup FULL", what the first, having taken
     * the share as lost, was rolling back.
     */
    @Test
    void shouldRefuseAZombiesReplicateOnAReplacementThatAnsweredNotHere() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final long born = AurogonTimestamp.pack(6_000_000, AurogonTimestamp.MAX_SERVER, AurogonTimestamp.MAX_LOOP);
            onLoop(node, () -> {
                service.replacement(born);
                return null;
            });
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0); // issued before the replacement was born
            assertThat(send(node, AurogonRpc.HOLDS, request(ts))).as("the recovery's question")
                .isEqualTo(Backups.NOT_HERE);
            final long[] zombie = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_A, ts, 41, 1))).map(r -> new long[] {
                    r.payload().getInt(0), r.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET)}));
            assertThat(zombie[0]).as("the zombie's part refused").isEqualTo(Backups.STALE);
            assertThat(zombie[1]).as("its floor: at least the birth floor").isGreaterThanOrEqualTo(born);
            assertThat(send(node, AurogonRpc.HOLDS, request(ts))).as("still no record").isEqualTo(Backups.NOT_HERE);
            final long above = AurogonTimestamp.pack(7_000_000, 1, 0);
            final int held = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_B, above, 42, 2)))
                .map(r -> r.payload().getInt(0)));
            assertThat(held).as("a transaction after its birth").isEqualTo(Backups.OK);
            assertThat(send(node, AurogonRpc.HOLDS, request(above))).isEqualTo(Backups.FULL);
        }
    }

    /**
     * The host tells a compute node dead (cluster mode's recovery duty, {@code MemoryNodeContext#onDeadNode}): its
     * successor reuses the coordinator id (the node slot) and is heard, so the lease's silence never came for the
     * predecessor's pending version. Told dead, the step counts it, it becomes a suspect while the id still beats,
     * and a REPLICATE under the id at or below what was heard from it is refused STALE with that as the floor (the
     * successor's clock goes above everything its predecessor was heard to issue); one above it is held. Fails
     * before: the version stays unsuspected while the id beats, and the low REPLICATE is held.
     */
    @Test
    void shouldSuspectADeadNodesVersionsWhileItsSuccessorTalksUnderItsIdAndFloorTheSuccessor() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0); // server (slot) 1, loop 0
            final int held = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_B, ts, 21, 1))).map(r -> r.payload().getInt(0)));
            assertThat(held).as("held").isEqualTo(Backups.OK);
            final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(install, items, 0, KEY_A, ts);
            final int installed = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.INSTALL,
                install)).map(r -> r.payload().getInt(0)));
            assertThat(installed).as("installed pending (orphan checks armed)").isEqualTo(Participant.OK);
            final UnsafeBuffer beat = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(beat, 0, 0, 0, AurogonTimestamp.pack(4_000_000, 1, 0));
            assertThat(onLoop(node, () -> service.coordinatorsDied("cn", new long[] {5L << 48 | 1L << 32})))
                .as("the dead node's version pending here").isEqualTo(1);
            final long deadline = System.nanoTime() + 30_000_000_000L; // a bound, not a delay: loaded machines
            while (onLoop(node, () -> participant.suspectsAt(ts).size()) == 0 && System.nanoTime() < deadline) {
                node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.HEARTBEAT, beat)));
            }
            assertThat(onLoop(node, () -> participant.suspectsAt(ts).size())).as("suspect while the id beats")
                .isEqualTo(1);
            final long below = AurogonTimestamp.pack(4_500_000, 1, 0);
            final long[] stale = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_C, below, 22, 2))).map(r -> new long[] {
                    r.payload().getInt(0), r.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET)}));
            assertThat(stale).as("refused, floored at the predecessor's").containsExactly(Backups.STALE, ts);
            final long above = AurogonTimestamp.pack(6_000_000, 1, 0);
            final int successor = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_C, above, 23, 3))).map(r -> r.payload().getInt(0)));
            assertThat(successor).as("the successor above it").isEqualTo(Backups.OK);
        }
    }

    /**
     * A successor incarnation whose clock restarted below its predecessor's dead mark, no backups: its INSTALL (or
     * INSERT) at or below the mark of a transaction not pending here is refused {@link Participant#STALE} with the mark
     * as the floor and installs nothing, and an INSTALL above the mark is taken. Fails before: the low INSTALL was taken (OK), a version the node
     * then reads as the dead incarnation's ({@code mayStillCommit} false: a lost-share recovery rolls it back under
     * its live coordinator).
     * <p>A successor incarnation ("cn2") whose timestamp equals the one its dead predecessor ("cn") has pending here
     * (the same clock nanosecond and coordinator id: its clock restarted below): that version is the dead
     * incarnation's, so the successor's INSTALL of that key, its INSTALL of another key, its INSERT and its
     * pre-attaching READ at that timestamp are each refused STALE with the mark as the floor and change nothing. Fails before
     * (issue 20, aurotests): the successor's INSTALL of the pending key was answered OK ("the same write again": its
     * COMMIT would commit the dead one's version with its own value) and that of another key joined the dead one's
     * transaction.
     */
    @Test
    void shouldRefuseAnInstallAtOrBelowItsCoordinatorIdsDeadMark() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0); // server (slot) 1, loop 0
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_A}), ts);
            onLoop(node, () -> service.coordinatorsDied("cn", new long[] {5L << 48 | 1L << 32}));
            assertThat(service.deadUpTo(ts)).isEqualTo(ts);
            final long below = AurogonTimestamp.pack(4_000_000, 1, 0);
            final UnsafeBuffer low = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(low, items, 0, KEY_C, below);
            final long[] refused = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.INSTALL, low))
                .map(r -> new long[] {r.payload().getInt(0), r.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET)}));
            assertThat(refused).as("refused, floored at the mark").containsExactly(Participant.STALE, ts);
            assertThat(pendingAt(participant, items, KEY_C, below)).as("nothing installed").isFalse();
            final UnsafeBuffer insert = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(insert, items, 0, 77, below);
            assertThat(send(node, AurogonRpc.INSERT, insert)).as("an INSERT likewise").isEqualTo(Participant.STALE);
            // A pre-attaching READ installs a pending version too (review of f0fa52f7: it was taken, and the
            // successor's later INSTALLs with it, a version of theirs pending).
            final UnsafeBuffer preattach = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(preattach, items, Participant.FLAG_PREATTACH | Participant.FLAG_NO_DEFER, KEY_C,
                below);
            final long[] read = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.READ,
                preattach)).map(r -> new long[] {r.payload().getInt(0), r.payload().getLong(8)}));
            assertThat(read).as("a pre-attaching READ likewise, floored at the mark")
                .containsExactly(Participant.STALE, ts);
            assertThat(pendingAt(participant, items, KEY_C, below)).as("nothing pre-attached").isFalse();
            final io.scythe.rrpc.RrpcClient successor = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn2"), new io.scythe.rrpc.RrpcOptions());
            final List<String> answers = new ArrayList<>();
            for (final long[] call : new long[][] {{AurogonRpc.INSTALL, KEY_A, 0}, {AurogonRpc.INSTALL, KEY_B, 0},
                {AurogonRpc.INSERT, 77, 0}, {AurogonRpc.READ, KEY_C, Participant.FLAG_PREATTACH
                    | Participant.FLAG_NO_DEFER}}) {
                final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(request, items, (int) call[2], call[1], ts);
                final int seenAt = call[0] == AurogonRpc.READ ? 8 : AurogonRpc.STATUS_SEEN_OFFSET;
                answers.add(node.on(rt -> successor.rocket("mn").compose(rocket -> rocket.call((int) call[0],
                    request)).map(r -> r.payload().getInt(0) + " floor " + r.payload().getLong(seenAt))));
            }
            final String atMark = Participant.STALE + " floor " + ts;
            assertThat(answers).as("install of the pending key, of another, insert, pre-attaching read")
                .containsExactly(atMark, atMark, atMark, atMark);
            final long[][] rows = participant.versions(items, KEY_A);
            assertThat(rows.length).as("the dead one's version alone, still pending").isEqualTo(2);
            assertThat(rows[0]).containsExactly(ts, ts, 1);
            for (final long key : new long[] {KEY_B, KEY_C, 77}) {
                assertThat(pendingAt(participant, items, key, ts)).as("nothing of the successor's on " + key)
                    .isFalse();
            }
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_C}), AurogonTimestamp.pack(6_000_000, 1, 0));
        }
    }

    /**
     * No mark set (the host's release step has not run yet): a successor incarnation ("cn2") issues exactly the
     * timestamp its predecessor ("cn") has pending here. Its INSTALL of that key and of another key, its INSERT and its
     * pre-attaching READ are refused STALE floored at that timestamp; its COMMIT is refused and its ROLLBACK is a no-op,
     * so the predecessor's version stays pending, untouched, and nothing of the successor's is pending; the
     * predecessor's own INSTALL of another key at it is taken, and a recovery's ROLLBACK (BY_RECOVERY) still rolls
     * its version back. Fails before (review of the aurotests merge, issue 20): the INSTALL of the pending key was
     * answered OK ("the same write again"), that of another key joined the predecessor's transaction, and the
     * successor's COMMIT committed the predecessor's version with its value.
     */
    @Test
    void shouldRefuseAnotherIncarnationsRequestsAtAPendingTimestamp() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0);
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_A}), ts);
            assertThat(service.deadUpTo(ts)).as("no mark").isZero();
            final io.scythe.rrpc.RrpcClient successor = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn2"), new io.scythe.rrpc.RrpcOptions());
            final List<String> answers = new ArrayList<>();
            for (final long[] call : new long[][] {{AurogonRpc.INSTALL, KEY_A, 0}, {AurogonRpc.INSTALL, KEY_B, 0},
                {AurogonRpc.INSERT, 77, 0}, {AurogonRpc.READ, KEY_C, Participant.FLAG_PREATTACH
                    | Participant.FLAG_NO_DEFER}, {AurogonRpc.COMMIT, KEY_A, 0}, {AurogonRpc.ROLLBACK, KEY_A, 0}}) {
                final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(request, items, (int) call[2], call[1], ts);
                final int seenAt = call[0] == AurogonRpc.READ ? 8 : AurogonRpc.STATUS_SEEN_OFFSET;
                answers.add(node.on(rt -> successor.rocket("mn").compose(rocket -> rocket.call((int) call[0],
                    request)).map(r -> r.payload().getInt(0) + (call[0] == AurogonRpc.ROLLBACK ? ""
                        : " floor " + r.payload().getLong(seenAt)))));
            }
            final String refused = Participant.STALE + " floor " + ts;
            assertThat(answers).as("install of the pending key, of another, insert, pre-attaching read, commit, rollback")
                .containsExactly(refused, refused, refused, refused, refused, String.valueOf(Participant.OK));
            final long[][] rows = participant.versions(items, KEY_A);
            assertThat(rows.length).as("the predecessor's version alone, still pending").isEqualTo(2);
            assertThat(rows[0]).containsExactly(ts, ts, 1);
            for (final long key : new long[] {KEY_B, KEY_C, 77}) {
                assertThat(pendingAt(participant, items, key, ts)).as("nothing of the successor's on " + key).isFalse();
            }
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_B}), ts); // the predecessor's own: taken
            assertThat(pendingAt(participant, items, KEY_B, ts)).isTrue();
            final UnsafeBuffer rollback = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(rollback, items | AurogonRpc.BY_RECOVERY, 0, KEY_A, ts);
            final int recovered = node.on(rt -> successor.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.ROLLBACK,
                rollback)).map(r -> r.payload().getInt(0)));
            assertThat(recovered).as("a recovery's rollback").isEqualTo(Participant.OK);
            assertThat(pendingAt(participant, items, KEY_A, ts)).as("rolled back by the recovery").isFalse();
        }
    }

    /**
     * A pre-attaching READ installs its PENDING version before it runs, and may then park (on an older pending
     * version, or deferred as hot) before it answers. The incarnation that made its timestamp pending was recorded
     * only with the answer, so another incarnation's INSTALL at the same timestamp in that window was taken as the
     * first (OK), became the timestamp's owner, and could commit or roll back the reader's version; the reader's own
     * later INSTALL was refused. Fails before: the successor's INSTALL was answered OK.
     */
    @Test
    void shouldOwnATimestampFromItsPreAttachNotFromTheParkedReadsAnswer() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final long older = AurogonTimestamp.pack(4_000_000, 3, 0);
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0);
            installOverRpc(node, List.<long[]>of(new long[] {items, KEY_C}), older); // the read below parks on it
            final io.scythe.rrpc.RrpcClient reader = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn3"), new io.scythe.rrpc.RrpcOptions());
            final io.scythe.rrpc.RrpcClient successor = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn2"), new io.scythe.rrpc.RrpcOptions());
            final UnsafeBuffer read = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(read, items, Participant.FLAG_PREATTACH | Participant.FLAG_NO_DEFER, KEY_C, ts);
            final java.util.concurrent.CompletableFuture<Integer> parked = new java.util.concurrent.CompletableFuture<>();
            node.on(rt -> reader.rocket("mn").compose(rocket -> {
                rocket.call(AurogonRpc.READ, read).map(r -> r.payload().getInt(0))
                    .onComplete(ar -> parked.complete(ar.succeeded() ? ar.result() : -1));
                return Future.succeededFuture(0);
            }));
            // The read reached the node and installed its version (then parked): poll the participant, no sleep.
            for (int i = 0; i < 2_000 && !onLoop(node, () -> pendingAt(participant, items, KEY_C, ts)); i++) {
                Thread.sleep(1);
            }
            assertThat(onLoop(node, () -> pendingAt(participant, items, KEY_C, ts))).as("pre-attached").isTrue();
            assertThat(parked).as("parked on the older pending version").isNotDone();
            final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(install, items, 0, KEY_B, ts);
            final int other = node.on(rt -> successor.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.INSTALL,
                install)).map(r -> r.payload().getInt(0)));
            assertThat(other).as("another incarnation's INSTALL at the reader's timestamp").isEqualTo(Participant.STALE);
            assertThat(onLoop(node, () -> pendingAt(participant, items, KEY_B, ts))).isFalse();
            // The older version is rolled back by its writer: the parked read answers (the loaded value below), and
            // the reader's own INSTALL is still its own.
            final UnsafeBuffer rollback = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(rollback, items, 0, KEY_C, older);
            assertThat(send(node, AurogonRpc.ROLLBACK, rollback)).isEqualTo(Participant.OK);
            assertThat(parked.get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(Participant.OK);
            final int own = node.on(rt -> reader.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.INSTALL,
                install)).map(r -> r.payload().getInt(0)));
            assertThat(own).as("the reader's own INSTALL").isEqualTo(Participant.OK);
        }
    }

    /**
     * A replacement process of a cluster running another protocol ({@code AurogonModule#replacementFloor}: born at
     * Long.MAX_VALUE, Aurogon serves nothing there): an Aurogon REPLICATE reaching it fails clearly, and holds
     * nothing. Fails before: it was refused STALE with Long.MAX_VALUE as the floor, which floors the sender's clock there.
     */
    @Test
    void shouldFailAReplicateOnAReplacementOfAnotherProtocolsCluster() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            onLoop(node, () -> {
                service.replacement(Long.MAX_VALUE);
                return 0;
            });
            final long ts = AurogonTimestamp.pack(5_000_000, 1, 0);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> node.on(rt -> rt.rocket("mn").compose(rocket ->
                rocket.call(AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(copy.schema().id(), KEY_B, ts, 21, 1)))
                .map(r -> r.payload().getInt(0) + " floor " + r.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET))))
                .hasMessageContaining("a replacement process of a cluster running another protocol");
            assertThat(onLoop(node, () -> service.backups().holds(ts).state())).as("nothing held")
                .isEqualTo(Backups.NOT_HERE);
        }
    }

    /**
     * {@link AurogonTxn} itself against a marked node (review of aurolost: deleting the coordinator's clock floor
     * passed every test): a dead incarnation ("cn-old") was heard under this runtime's coordinator id at a timestamp
     * 10 s ahead of its clock, and the host told it dead. Each of a pre-attaching READ (readForUpdate), an INSTALL (a
     * write after a plain read) and an INSERT of an attempt below that mark is refused STALE: the attempt aborts
     * {@link AurogonAborts#STALE}, installs nothing, and the next attempt on the same loop's clock (floored at the
     * mark) commits above it. Fails with {@code timestamps.floor} removed from {@code AurogonTxn#floored}: the retry
     * is refused again.
     */
    @Test
    void shouldFloorTheCoordinatorsClockAtAMarkAndCommitItsRetryAboveIt() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final io.scythe.txn.Protocol protocol = AurogonModule.AUROGON_HOST_CLOCK; // no DST chase of the mark
            final long first = node.on(rt -> {
                final io.scythe.txn.Txn t = protocol.begin(rt, false);
                return t.read("items", 1).compose(v -> t.commit());
            });
            final int id = (int) (first & 0xffff); // this runtime's server (slot 0) and loop (1)
            final long mark = AurogonTimestamp.pack(AurogonTimestamp.clockNs(first) + 10_000_000_000L, id >>> 8,
                id & 0xff);
            final io.scythe.rrpc.RrpcClient old = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn-old"), new io.scythe.rrpc.RrpcOptions());
            final UnsafeBuffer beat = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(beat, 0, 0, 0, mark);
            node.on(rt -> old.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.HEARTBEAT, beat)));
            onLoop(node, () -> service.coordinatorsDied("cn-old", new long[] {(long) (id >>> 8) << 32}));
            assertThat(service.deadUpTo(mark)).as("the dead incarnation's mark").isEqualTo(mark);

            final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
            seven.putLong(0, 7);
            // Each case on a fresh runtime: its clock (a runtime's own) starts below the mark again.
            final List<java.util.function.Function<io.scythe.txn.Txn, Future<Long>>> cases = List.of(
                t -> t.readForUpdate("items", 2).compose(v -> {
                    t.write("items", 2, seven, 0, 8);
                    return t.commit();
                }),
                t -> t.read("items", 3).compose(v -> {
                    t.write("items", 3, seven, 0, 8);
                    return t.commit();
                }),
                t -> {
                    t.insert("items", 20, seven, 0, 8);
                    return t.commit();
                });
            final long[] keys = {2, 3, 20};
            for (int c = 0; c < cases.size(); c++) {
                final java.util.function.Function<io.scythe.txn.Txn, Future<Long>> body = cases.get(c);
                final List<String> seen = new ArrayList<>();
                final long committed = node.on(rt -> {
                    final io.scythe.txn.Txn refused = protocol.begin(rt, false);
                    return body.apply(refused).transform(r -> {
                        seen.add(r.succeeded() ? "committed at " + AurogonTimestamp.toString(r.result())
                            : r.cause() instanceof io.scythe.txn.AbortException a ? a.reason().label()
                            : r.cause().toString());
                        return refused.abort();
                    }).compose(v -> {
                        final io.scythe.txn.Txn retry = protocol.begin(rt, false);
                        return body.apply(retry);
                    });
                });
                assertThat(seen).as("case " + c + ": the attempt below the mark")
                    .containsExactly(AurogonAborts.STALE.label());
                assertThat(committed).as("case " + c + ": its retry, floored").isGreaterThan(mark);
                final long[][] rows = participant.versions(items, keys[c]);
                assertThat(rows[0]).as("case " + c + ": committed above the mark, nothing below it")
                    .containsExactly(committed, rows[0][1], 0);
                for (final long[] row : rows) {
                    assertThat(row[2]).as("nothing left pending").isZero();
                }
            }
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * A successor incarnation ("cn2") talks under the dead one's ("cn") coordinator id before the dead one's release
     * runs: the mark covers only what the dead one was heard to issue, a release run again does not raise it, and a
     * repost of a part held here (its reply lost) at or below the mark is answered by the hold, never refused STALE.
     * Before, the mark took the successor's largest timestamp (its held transactions suspected for good, a rerun
     * pushing it further), and the repost was refused STALE: the coordinator ran again under a new timestamp while
     * the backups held the old one, which the suspect recovery could commit too.
     */
    @Test
    void shouldMarkOnlyTheDeadIncarnationsTimestampsAndAnswerAHeldRepost() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final int backup = copy.schema().id();
            final io.scythe.rrpc.RrpcClient successor = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn2"), new io.scythe.rrpc.RrpcOptions());
            final long dead = AurogonTimestamp.pack(5_000_000, 1, 0); // server (slot) 1, loop 0
            final long restartedBelow = AurogonTimestamp.pack(4_500_000, 1, 0);
            final long above = AurogonTimestamp.pack(6_000_000, 1, 0);
            final UnsafeBuffer beat = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(beat, 0, 0, 0, dead);
            assertThat(send(node, AurogonRpc.HEARTBEAT, beat)).as("the dead incarnation heard")
                .isEqualTo(Participant.OK);
            assertThat(replicated(node, successor, AurogonPromotionTest.replicate(backup, KEY_B,
                restartedBelow, 32, 2))).as("the successor's, its clock restarted below").isEqualTo(Backups.OK);
            assertThat(replicated(node, successor, AurogonPromotionTest.replicate(backup, KEY_C,
                above, 33, 3))).as("the successor's, above").isEqualTo(Backups.OK);
            final long[] prefixes = {5L << 48 | 1L << 32};
            onLoop(node, () -> service.coordinatorsDied("cn", prefixes));
            assertThat(onLoop(node, () -> service.deadUpTo(dead))).as("the dead one's largest, not the successor's")
                .isEqualTo(dead);
            onLoop(node, () -> service.coordinatorsDied("cn", prefixes));
            assertThat(onLoop(node, () -> service.deadUpTo(dead))).as("a release run again").isEqualTo(dead);
            assertThat(replicated(node, successor, AurogonPromotionTest.replicate(backup, KEY_B,
                restartedBelow, 32, 2))).as("a repost of a held part below the mark").isEqualTo(Backups.OK);
            assertThat(replicated(node, successor, AurogonPromotionTest.replicate(backup, KEY_C,
                above, 33, 3))).as("a repost above the mark").isEqualTo(Backups.OK);
            assertThat(replicated(node, successor, AurogonPromotionTest.replicate(backup, 4,
                AurogonTimestamp.pack(4_600_000, 1, 0), 34, 4))).as("a new one below: floored")
                .isEqualTo(Backups.STALE);
        }
    }

    /** Installs pending versions of {@code records} at {@code ts}, sent by the coordinator (heard by the node). */
    private static void installOverRpc(final OneMemoryNode node, final List<long[]> records, final long ts)
        throws Exception {
        for (final long[] r : records) {
            final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(install, (int) r[0], 0, r[1], ts);
            assertThat(send(node, AurogonRpc.INSTALL, install)).as("installed").isEqualTo(Participant.OK);
        }
    }

    /** A REPLICATE's status, sent by {@code client} (another compute node than the node's own, "cn"). */
    private static int replicated(final OneMemoryNode node, final io.scythe.rrpc.RrpcClient client,
                                  final UnsafeBuffer part) throws Exception {
        return node.on(rt -> client.rocket("mn")
            .compose(rocket -> rocket.call(AurogonRpc.REPLICATE, part)).map(r -> r.payload().getInt(0)));
    }

    /**
     * More suspects of one transaction on a node than a SUSPECTS reply holds: the reply says it was cut short
     * ({@link AurogonRpc#SUSPECTS_TRUNCATED}, beside {@link AurogonRpc#SUSPECTS_HELD}), and the resolution asks again
     * until none is left: the held write committed, every other suspect rolled back. Before, the flag did not exist
     * and the suspects past the first reply stayed pending.
     */
    @Test
    void shouldPageThroughSuspectsOneReplyCannotHold() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 2048)) {
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final long ts = AurogonTimestamp.pack(1_000_000, 1, 0);
            final int many = 1_000;
            onLoop(node, () -> {
                participant.orphans(1_000, coordinator -> true); // suspect after 1 us
                for (long k = 100; k < 100 + many; k++) {
                    participant.install(items, k, ts);
                }
                return null;
            });
            final UnsafeBuffer part = AurogonPromotionTest.replicate(copy.schema().id(), 100, ts, 11, 111);
            final int replicated = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                part)).map(r -> r.payload().getInt(0)));
            assertThat(replicated).isEqualTo(Backups.OK);
            final long deadline = System.nanoTime() + 30_000_000_000L; // a bound, not a delay: loaded machines
            while (onLoop(node, () -> participant.suspectsAt(ts).size()) < many && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            final int[] reply = node.on(rt -> rt.rocket("mn").compose(rocket -> {
                final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                CoordinatorRecovery.fill(request, 0, 0, 0, ts);
                return rocket.call(AurogonRpc.SUSPECTS, request);
            }).map(r -> new int[] {r.payload().getInt(0), r.payload().getInt(4)}));
            assertThat(reply[0]).as("cut short").isPositive().isLessThan(many);
            assertThat(reply[1]).isEqualTo(AurogonRpc.SUSPECTS_HELD | AurogonRpc.SUSPECTS_TRUNCATED);
            // What a cluster memory node's health reports (moduleUnsettled, scythe chaos's end check): every pending
            // version and the held replication, counted off the node's loop.
            assertThat(new AurogonModule().unsettledState(node.services.db())).as("pending and held, off the loop")
                .isEqualTo(many + 1L);
            final String resolved = node.on(rt -> outcome(CoordinatorRecovery.resolve(rt, ts, "mn")));
            assertThat(resolved).isEqualTo("ok");
            assertThat(onLoop(node, () -> participant.pendingTimestamps())).as("left pending").isEmpty();
            assertThat(onLoop(node, service::unsettled)).as("nothing undecided once resolved").isZero();
            assertThat(participant.versions(items, 100)[0][0]).as("the held write committed").isEqualTo(ts);
            assertThat(pendingAt(participant, items, 100 + many - 1, ts)).isFalse();
            assertThat(participant.versions(items, 100 + many - 1)[0][0]).as("rolled back").isNotEqualTo(ts);
        }
    }

    /** A request to the one node (its status). */
    private static int send(final OneMemoryNode node, final int rpc, final UnsafeBuffer request) throws Exception {
        return node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(rpc, request))
            .map(reply -> reply.payload().getInt(0)));
    }

    private static UnsafeBuffer request(final long ts) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
        CoordinatorRecovery.fill(request, 0, 0, 0, ts);
        return request;
    }

    /**
     * The two-resolver race of the f+1 rule (review, stop 38), each resolver's step driven by hand on one node (the
     * primary of key 1 and its backup): (1) resolver A found every live share held after a memory node died and
     * marked its commit (APPLY at the holder); resolver B, told "not held" by the node before it died, rolls back
     * after: its DISCARD is refused and it yields, the version stays pending (before: B's ROLLBACK went out beside
     * its DISCARDs and rolled back the write A was committing) and A's commit then commits it. (2) B's DISCARD
     * landed first; A, deciding to commit from HOLDS answers it read before, rolls back (before: it committed at the
     * primary, or failed on the discarded holder's FETCH).
     */
    @Test
    void shouldDecideOnceWhenTwoResolversRace() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 2048)) {
            final Participant participant = node.services.service(ParticipantService.class).participant();
            final int items = node.table.schema().id();
            final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
            final List<long[]> suspects = List.<long[]>of(new long[] {items, KEY_A});
            final long ts = AurogonTimestamp.pack(1_000_000, 1, 0);
            final long ts2 = AurogonTimestamp.pack(1_000_500, 2, 0);
            onLoop(node, () -> {
                participant.install(items, KEY_A, ts);
                return null;
            });
            assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(copy.schema().id(), KEY_A,
                ts, 11, 111))).isEqualTo(Backups.OK);
            assertThat(send(node, AurogonRpc.APPLY, request(ts))).as("A's mark").isEqualTo(Backups.OK);
            final CoordinatorRecovery.Decision b = new CoordinatorRecovery.Decision();
            b.commit = false;
            final String rolled = node.on(rt -> outcome(CoordinatorRecovery.rollBack(rt, ts, b, "mn", suspects)));
            assertThat(rolled).isEqualTo("ok");
            assertThat(b.yielded).as("B yields to the commit marked first").isTrue();
            assertThat(pendingAt(participant, items, KEY_A, ts)).as("not rolled back under A").isTrue();
            final CoordinatorRecovery.Decision a = new CoordinatorRecovery.Decision();
            a.entries.put("mn", 1);
            a.txnId = 11;
            final String committed = node.on(rt -> outcome(CoordinatorRecovery.commit(rt, ts, a, "mn", suspects)));
            assertThat(committed).isEqualTo("ok");
            assertThat(pendingAt(participant, items, KEY_A, ts)).isFalse();
            assertThat(participant.versions(items, KEY_A)[0][0]).as("committed").isEqualTo(ts);

            onLoop(node, () -> {
                participant.install(items, KEY_B, ts2);
                return null;
            });
            assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(copy.schema().id(), KEY_B,
                ts2, 12, 222))).isEqualTo(Backups.OK);
            assertThat(send(node, AurogonRpc.DISCARD, request(ts2))).as("B's mark").isEqualTo(Backups.OK);
            final CoordinatorRecovery.Decision a2 = new CoordinatorRecovery.Decision();
            a2.entries.put("mn", 1);
            a2.txnId = 12;
            final String adopted = node.on(rt -> outcome(CoordinatorRecovery.commit(rt, ts2, a2, "mn",
                List.<long[]>of(new long[] {items, KEY_B}))));
            assertThat(adopted).isEqualTo("ok");
            assertThat(a2.commit).as("A adopts B's rollback").isFalse();
            assertThat(pendingAt(participant, items, KEY_B, ts2)).isFalse();
            final long[][] versions = participant.versions(items, KEY_B);
            assertThat(versions == null ? List.of() : List.of(versions[0][0])).as("rolled back").doesNotContain(ts2);
            shouldApplyLateWritesToABackupByTheKeysOwnDeletes(node, copy); // one node for all three (test time)
            shouldForgetDeletesNoApplyCanNeed(node, copy);
            shouldNeverDecideAgainADecisionForgotten(node, copy);
        }
    }

    /**
     * Past the decisions a holder remembers (shrunk to 1 here, {@code Backups#remembered}): resolver A marked its
     * commit (APPLY at the holder), the holder decided another transaction of the same coordinator since and forgot
     * A's; resolver B, deciding to roll back, comes after: the holder answers FORGOTTEN, B yields and the version A
     * commits stays pending (before: B's DISCARD found nothing, was taken as a new fence, and B rolled back the
     * version A was committing); HOLDS answers FORGOTTEN (before: ABORTED, fencing it anew), a REPLICATE of it is
     * refused as stale with a floor at or above it. Run on the race test's node (keys apart).
     */
    private static void shouldNeverDecideAgainADecisionForgotten(final OneMemoryNode node, final Table copy)
        throws Exception {
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final int items = node.table.schema().id();
        final long ts = AurogonTimestamp.pack(30_000_000, 6, 0);
        final long next = AurogonTimestamp.pack(30_000_100, 6, 0);
        onLoop(node, () -> {
            service.backups().remembered = 1;
            participant.install(items, KEY_C, ts);
            return null;
        });
        try {
            assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(copy.schema().id(), KEY_C,
                ts, 13, 333))).isEqualTo(Backups.OK);
            assertThat(send(node, AurogonRpc.APPLY, request(ts))).as("A's mark").isEqualTo(Backups.OK);
            // A later attempt of the coordinator, its REPLICATE saying A's is over (its low-water above it), decided.
            assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(copy.schema().id(), KEY_C,
                next, 14, 444))).isEqualTo(Backups.OK);
            assertThat(send(node, AurogonRpc.DISCARD, request(next))).as("a later decision").isEqualTo(Backups.OK);
            final CoordinatorRecovery.Decision b = new CoordinatorRecovery.Decision();
            b.commit = false;
            final String rolled = node.on(rt -> outcome(CoordinatorRecovery.rollBack(rt, ts, b, "mn",
                List.<long[]>of(new long[] {items, KEY_C}))));
            assertThat(rolled).isEqualTo("ok");
            assertThat(b.yielded && b.forgotten).as("B yields to the decision forgotten").isTrue();
            assertThat(pendingAt(participant, items, KEY_C, ts)).as("not rolled back under A").isTrue();
            assertThat(send(node, AurogonRpc.HOLDS, request(ts))).as("forgotten").isEqualTo(Backups.FORGOTTEN);
            assertThat(send(node, AurogonRpc.APPLY, request(ts))).as("nor marked again").isEqualTo(Backups.FORGOTTEN);
            final long seen = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
                AurogonPromotionTest.replicate(copy.schema().id(), KEY_C, ts, 13, 333))).map(reply -> {
                    assertThat(reply.payload().getInt(0)).isEqualTo(Backups.STALE);
                    return reply.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET);
                }));
            assertThat(seen).as("the stale reply's floor").isGreaterThanOrEqualTo(ts);
            assertThat(onLoop(node, () -> participant.commit(items, KEY_C, ts, new byte[8]))).as("A commits")
                .isEqualTo(Participant.OK);
        } finally {
            onLoop(node, () -> service.backups().remembered = Backups.REMEMBERED);
        }
    }

    /** REPLICATE (one write: {@code value} or, null, a delete) then APPLY of the transaction at {@code ts}. */
    static void applied(final OneMemoryNode node, final int table, final long key, final long ts,
                                final Long value) throws Exception {
        final UnsafeBuffer part = value != null ? AurogonPromotionTest.replicate(table, key, ts, ts, value)
            : new UnsafeBuffer(new byte[AurogonRpc.REPLICATE_HEADER_BYTES]);
        if (value == null) {
            CoordinatorRecovery.fill(part, table, AurogonRpc.DELETE, key, ts);
            part.putInt(AurogonRpc.REPLICATE_EXPECTED_OFFSET, 1);
            part.putInt(AurogonRpc.REPLICATE_OFFSET_OFFSET, 0);
            part.putLong(AurogonRpc.REPLICATE_MASK_OFFSET, 1);
            part.putLong(AurogonRpc.REPLICATE_TXN_OFFSET, ts);
            part.putLong(AurogonRpc.REPLICATE_LOW_OFFSET, ts);
        }
        assertThat(send(node, AurogonRpc.REPLICATE, part)).isEqualTo(Backups.OK);
        assertThat(send(node, AurogonRpc.APPLY, request(ts))).isEqualTo(Backups.OK);
    }

    private static boolean liveIn(final Table table, final long key) {
        final long pointer = table.lookup(key);
        final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
        return at >= 0 && (table.objectMemory().getShort(at + io.scythe.storage.ObjectLayout.FLAGS_OFFSET)
            & io.scythe.storage.ObjectLayout.FLAG_DELETED) == 0;
    }

    /**
     * APPLYs of different transactions reach a backup in any order (a dead coordinator's, by its recovery, a lease
     * late): (1) a delete of a key whose insert was not applied yet, then that older insert: the key stays absent
     * (before: the delete wrote nothing, the insert went in: a key live on the backup, absent on the primary; explorer
     * phantom seed 16); (2) a key deleted and its tombstone reclaimed, then the late insert of another key at an older
     * timestamp: applied (before: skipped below the table's absent bound: tpcc's new_order rows missing on a backup).
     * Run by {@link #shouldDecideOnceWhenTwoResolversRace} on its node (keys apart from its own; fails before).
     */
    private static void shouldApplyLateWritesToABackupByTheKeysOwnDeletes(final OneMemoryNode node, final Table copy)
        throws Exception {
        {
            final int id = copy.schema().id();
            applied(node, id, LATE_A, AurogonTimestamp.pack(1_000_900, 1, 0), null);
            // Another coordinator's (server 4): coordinator 2 reported a low-water above 1_000_100 with its REPLICATE at
            // 1_000_500 (the race above), and a REPLICATE below it is refused STALE (review, stop 40).
            applied(node, id, LATE_A, AurogonTimestamp.pack(1_000_100, 4, 0), 7L);
            assertThat(onLoop(node, () -> liveIn(copy, LATE_A))).as("the older insert after the delete").isFalse();

            applied(node, id, LATE_B, AurogonTimestamp.pack(1_001_000, 1, 0), 8L);
            applied(node, id, LATE_B, AurogonTimestamp.pack(1_002_000, 1, 0), null);
            onLoop(node, () -> copy.reclaim(Long.MAX_VALUE));
            assertThat(copy.absentBound()).isGreaterThanOrEqualTo(AurogonTimestamp.pack(1_002_000, 1, 0));
            applied(node, id, LATE_C, AurogonTimestamp.pack(1_001_500, 3, 0), 9L);
            assertThat(onLoop(node, () -> liveIn(copy, LATE_C))).as("another key's late insert").isTrue();
            assertThat(onLoop(node, () -> liveIn(copy, LATE_B))).isFalse();
        }
    }

    /**
     * deletedAt is bounded ({@code ParticipantService#pruneDeletes}): a key's delete is remembered while a transaction
     * older than it is held here (its late APPLY, an older insert of the key, must find it: the key stays absent; a
     * horizon of the time lag alone dropped it and the insert went in), and forgotten once nothing held is older and
     * it lags the newest timestamp by more than {@code PRUNE_LAG_NS}; a REPLICATE below the forgotten ones is then
     * refused as stale, its reply naming a floor above them (the coordinator's clock goes there). Before, no entry
     * was ever dropped. Run on the race test's node (keys apart).
     */
    private static void shouldForgetDeletesNoApplyCanNeed(final OneMemoryNode node, final Table copy)
        throws Exception {
        final ParticipantService service = node.services.service(ParticipantService.class);
        final int id = copy.schema().id();
        final long old = AurogonTimestamp.pack(1_999_000, 4, 0);
        final long deleted = AurogonTimestamp.pack(2_000_000, 1, 0);
        final long lagged = AurogonTimestamp.pack(2_000_000 + 10_000_000, 1, 0);
        final long latest = AurogonTimestamp.pack(2_000_000 + 20_000_000, 1, 0);
        assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(id, LATE_D, old, old, 5)))
            .isEqualTo(Backups.OK);
        applied(node, id, LATE_D, deleted, null);
        applied(node, id, LATE_E, lagged, null); // 10 ms on: past the lag, but the older insert is held
        assertThat(onLoop(node, () -> service.deletedAt(id, LATE_D))).as("kept while an older write is held")
            .isEqualTo(deleted);
        assertThat(send(node, AurogonRpc.APPLY, request(old))).isEqualTo(Backups.OK);
        assertThat(onLoop(node, () -> liveIn(copy, LATE_D))).as("the late insert ordered by the kept delete")
            .isFalse();
        applied(node, id, LATE_F, latest, null);
        assertThat(onLoop(node, () -> new long[] {service.deletedAt(id, LATE_D), service.deletedAt(id, LATE_E),
            service.deletedAt(id, LATE_F)})).as("dropped once nothing held is older and past the lag")
            .containsExactly(0, 0, latest);
        assertThat(send(node, AurogonRpc.REPLICATE, AurogonPromotionTest.replicate(id, LATE_D,
            AurogonTimestamp.pack(2_500_000, 5, 0), 1, 6))).as("below the forgotten entries").isEqualTo(Backups.STALE);
        assertThat(onLoop(node, service::staleReplications)).isEqualTo(1L);
        final long seen = node.on(rt -> rt.rocket("mn").compose(rocket -> rocket.call(AurogonRpc.REPLICATE,
            AurogonPromotionTest.replicate(id, LATE_D, AurogonTimestamp.pack(2_600_000, 5, 0), 1, 7)))
            .map(reply -> reply.payload().getLong(AurogonRpc.STATUS_SEEN_OFFSET)));
        assertThat(seen).as("the stale reply names a floor above the forgotten entries (the retry's clock goes there)")
            .isGreaterThan(deleted);
        // The coordinator's side: a host clock floored there issues above it, and keeps real time's pace from there.
        final long[] issued = node.on(rt -> {
            final AurogonClock clock = AurogonClock.of(rt, AurogonClock.Mode.HOST);
            final long floor = AurogonTimestamp.pack(AurogonTimestamp.clockNs(clock.next()) + 10_000_000, 9, 0);
            clock.floor(floor);
            final long first = clock.next();
            return rt.timers().after(50_000).map(v -> new long[] {floor, first, clock.next()});
        });
        assertThat(issued[1]).as("above the floor").isGreaterThan(issued[0]);
        assertThat(AurogonTimestamp.clockNs(issued[2]) - AurogonTimestamp.clockNs(issued[1]))
            .as("50 us later, 50 us on (not 1 ns a timestamp)").isGreaterThanOrEqualTo(50_000);
    }
}
