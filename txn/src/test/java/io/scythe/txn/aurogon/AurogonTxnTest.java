package io.scythe.txn.aurogon;

import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcResponder;
import io.scythe.storage.BackupTables;
import io.scythe.storage.Table;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.txn.Catalog;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Aurogon's coordinator against one memory node's participant over RRPC. */
class AurogonTxnTest {
    private static final int TABLE = 1;

    /** One node for the tests on 32 items (each on its own keys): a node's setup is most of a test's time. */
    private static OneMemoryNode shared;
    /** {@link #shared}'s items with a backup copy on the same node ({@link #withBackup}), made once. */
    private static Catalog backedUp;

    @BeforeAll
    static void start() throws Exception {
        shared = new OneMemoryNode("items", 32);
    }

    @AfterAll
    static void stop() throws Exception {
        shared.close();
    }

    /** {@link #shared}'s items, their backup a copy on the same node ("mn" plays both). */
    private static synchronized Catalog withBackup() {
        if (backedUp == null) {
            backedUp = withBackup(shared);
        }
        return backedUp;
    }

    /** {@code node}'s items, their backup a new (empty) copy on the same node ("mn" plays both). */
    private static Catalog withBackup(final OneMemoryNode node) {
        final Table copy = node.services.db().create(BackupTables.schemaOf(node.table.schema(), 1));
        return new Catalog().add("items", List.of(new Catalog.Partition("mn", node.table.describe(),
            List.of(new Catalog.Replica("mn", copy.describe())))));
    }

    private static boolean pending(final Participant participant, final long key) {
        final long[][] rows = participant.versions(TABLE, key);
        if (rows != null) {
            for (final long[] row : rows) {
                if (row[2] == 1) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A value of 1,000 bytes, more than one RRPC bucket (472 bytes of payload), read in parts (READ, then READ_MORE)
     * with and without pre-attaching, and committed in parts (STAGE, then the COMMIT with the value's tail): the
     * next reader and the LogDB object get every byte; the bucket is unchanged.
     */
    @Test
    void shouldReadAndCommitValuesLongerThanOneBucketInParts() throws Exception {
        final int bytes = 1000;
        try (OneMemoryNode node = new OneMemoryNode("items", 32, false, bytes)) {
            assertThat(new io.scythe.rrpc.RrpcOptions().maxPayload()).isLessThan(bytes / 2); // what the node runs with
            final Participant participant = node.services.service(ParticipantService.class).participant();
            for (final Protocol protocol : List.of(AurogonModule.AUROGON_PRE, AurogonModule.AUROGON_BASE)) {
                final byte[] pattern = new byte[bytes];
                new java.util.SplittableRandom(protocol.name().hashCode()).nextBytes(pattern);
                final byte[] loaded = node.on(rt -> {
                    final Txn writer = protocol.begin(rt, false);
                    return writer.readForUpdate("items", 3).compose(v -> {
                        final byte[] before = new byte[v.capacity()];
                        v.getBytes(0, before);
                        writer.write("items", 3, new UnsafeBuffer(pattern), 0, bytes);
                        return writer.commit().map(ts -> before);
                    });
                });
                assertThat(loaded).hasSize(bytes);
                assertThat(pending(participant, 3)).isFalse();
                final byte[] read = node.on(rt -> {
                    final Txn reader = protocol.begin(rt, false);
                    return reader.read("items", 3).compose(v -> reader.commit().map(ts -> {
                        final byte[] got = new byte[v.capacity()];
                        v.getBytes(0, got);
                        return got;
                    }));
                });
                assertThat(read).as(protocol.name()).isEqualTo(pattern);
                final byte[] stored = new byte[bytes];
                node.table.objectMemory().getBytes(node.table.offsetOf(node.table.lookup(3))
                    + io.scythe.storage.ObjectLayout.VALUE_OFFSET, stored);
                assertThat(stored).as("written through to LogDB").isEqualTo(pattern);
            }
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * A coordinator paused past the orphan lease holding every acknowledgement: a §4.5 recovery committed its version
     * at its own timestamp (from the backups' copies, here over RPC as a recovery sends it) before the coordinator's
     * COMMIT lands. That COMMIT (and, for a value longer than one bucket, its STAGEs) finds the version committed: the
     * commit is done, the client told committed, the history told once (by the coordinator), and the loop goes on (a
     * next transaction commits). A version rolled back meanwhile is still a failed commit: in doubt, the loop gives
     * up. Fails before: the COMMIT (or STAGE) answered NOT_PENDING and the coordinator gave its loop up (stop 44's
     * cascade: every compute node dropping its lease).
     */
    @Test
    void shouldFinishACommitARecoveryCompletedMeanwhileAndGoOn() throws Exception {
        assertThat(decidedBeforeItsCommit(shared, 13, 8, true)).containsExactly("committed", "reported committed",
            "next committed");
        assertThat(committedValue(shared, 13)).isEqualTo(fill(8, 13));
        assertThat(decidedBeforeItsCommit(shared, 15, 8, false)).as("rolled back: not done")
            .containsExactly("outcome unknown", "gave up", "reported in doubt");
        final int bytes = 1000; // more than one bucket: STAGE parts, then the COMMIT with the tail
        try (OneMemoryNode node = new OneMemoryNode("items", 32, false, bytes)) {
            assertThat(decidedBeforeItsCommit(node, 4, bytes, true)).containsExactly("committed", "reported committed",
                "next committed");
            assertThat(committedValue(node, 4)).isEqualTo(fill(bytes, 4));
            assertThat(decidedBeforeItsCommit(node, 6, bytes, false)).as("rolled back, in parts: not done")
                .containsExactly("outcome unknown", "gave up", "reported in doubt");
            assertThat(node.services.service(ParticipantService.class).participant().violation()).isNull();
        }
        assertThat(shared.services.service(ParticipantService.class).participant().violation()).isNull();
    }

    /**
     * Dependent writes to other records (§4.3, "Aurogon issues R and then sends PW's metadata to PW's record to
     * pre-attach it"): under {@code aurogon-pre} an insert whose key the district-like read of key 7 named, and the
     * write of key 9 read without pre-attaching, are installed PENDING at the attempt's timestamp right after they
     * are buffered, before the commit is called, with no value until the COMMIT; the commit then gives every record
     * its value. Under {@code dst-to} (its counterpart with pre-attaching off, the same DST clock) the same attempt
     * installs them only at commit. Failed before the change: under {@code aurogon-pre} neither was pending.
     */
    @Test
    void shouldInstallDependentWritesToOtherRecordsRightAfterTheReadNotAtCommit() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Participant participant = node.services.service(ParticipantService.class).participant();
            assertThat(dependentWrites(node, AurogonModule.AUROGON_PRE, 7, 9)).containsExactly(
                "read 7: 100, names key 20", "pending before commit: 20 true, 9 true, 7 true", "committed",
                "read after: 7=101 9=105 20=777");
            assertThat(dependentWrites(node, AurogonModule.DST_TO, 10, 12)).containsExactly(
                "read 10: 100, names key 23", "pending before commit: 23 false, 12 false, 10 false", "committed",
                "read after: 10=101 12=105 23=777");
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * A write buffered after the attempt aborted (a procedure's callback on a read that was still out when another
     * read failed and the driver aborted) is refused and sends nothing: with early writes (dst-to-eager, aurogon-pre)
     * it sent an INSTALL after the abort had rolled back what it knew of, and that version stayed PENDING at the
     * attempt's timestamp for good (every later read of the key parked on it, every insert over it was refused).
     * Failed before the change: "wrote sent, pending true".
     */
    @Test
    void shouldSendNoWriteBufferedAfterTheAttemptAborted() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Participant participant = node.services.service(ParticipantService.class).participant();
            for (final Protocol protocol : List.of(AurogonModule.DST_TO_EAGER, AurogonModule.AUROGON_PRE)) {
                final long key = protocol == AurogonModule.DST_TO_EAGER ? 3 : 4;
                final String seen = node.on(rt -> {
                    final AurogonTxn t = (AurogonTxn) protocol.begin(rt, false);
                    final Future<UnsafeBuffer> read = t.read("items", key); // plain: not pre-attached
                    final Future<Void> aborted = t.abort(); // while the read is out
                    final Future<String> wrote = read.map(v -> {
                        try {
                            t.write("items", key, v, 0, 8);
                            return "sent";
                        } catch (final IllegalStateException e) {
                            return "refused";
                        }
                    });
                    return Future.all(aborted, wrote)
                        .compose(x -> waitFor(rt, () -> pendingAt(participant, TABLE, key, t.timestamp()), 20))
                        .map(x -> "wrote " + wrote.result() + ", pending "
                            + pendingAt(participant, TABLE, key, t.timestamp()));
                });
                assertThat(seen).as(protocol.name()).isEqualTo("wrote refused, pending false");
                assertThat(pending(participant, key)).isFalse();
            }
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * One attempt of {@code protocol}: reads {@code source} for update, key-dependent (its value names the key it
     * inserts: 13 + source + value - 100), reads {@code other} plainly, buffers the three writes, waits up to 20 ms
     * for their pending versions at its timestamp, then commits; a reader checks the values.
     */
    private static List<String> dependentWrites(final OneMemoryNode node, final Protocol protocol, final long source,
                                                final long other) throws Exception {
        final Participant participant = node.services.service(ParticipantService.class).participant();
        final List<String> seen = new ArrayList<>();
        node.on(rt -> {
            final AurogonTxn t = (AurogonTxn) protocol.begin(rt, false);
            return t.readForUpdateKeyDependent("items", source).compose(v -> {
                final long named = 13 + source + v.getLong(0) - 100; // the key the read's result names
                seen.add("read " + source + ": " + v.getLong(0) + ", names key " + named);
                final UnsafeBuffer row = new UnsafeBuffer(new byte[8]);
                row.putLong(0, v.getLong(0) + 1);
                t.write("items", source, row, 0, 8);
                row.putLong(0, 777);
                t.insert("items", named, row, 0, 8);
                return t.read("items", other).compose(o -> {
                    row.putLong(0, o.getLong(0) + 5);
                    t.write("items", other, row, 0, 8);
                    final java.util.function.BooleanSupplier installed = () ->
                        pendingAt(participant, TABLE, named, t.timestamp())
                            && pendingAt(participant, TABLE, other, t.timestamp());
                    return waitFor(rt, installed, 200).map(x -> {
                        seen.add("pending before commit: " + named + " "
                            + pendingAt(participant, TABLE, named, t.timestamp()) + ", " + other + " "
                            + pendingAt(participant, TABLE, other, t.timestamp()) + ", " + source + " "
                            + pendingAt(participant, TABLE, source, t.timestamp()));
                        return named;
                    });
                }).compose(named2 -> t.commit().map(ts -> {
                    seen.add("committed");
                    return named2;
                }));
            }).compose(named -> {
                final Txn reader = protocol.begin(rt, false);
                return Future.all(reader.read("items", source), reader.read("items", other),
                    reader.read("items", named)).compose(all -> reader.commit().map(ts -> {
                        seen.add("read after: " + source + "=" + all.<UnsafeBuffer>resultAt(0).getLong(0) + " "
                            + other + "=" + all.<UnsafeBuffer>resultAt(1).getLong(0) + " " + named + "="
                            + all.<UnsafeBuffer>resultAt(2).getLong(0));
                        return ts;
                    }));
            });
        });
        return seen;
    }

    /** Succeeds once {@code done} holds or after {@code tries} checks 100 us apart. */
    private static Future<Void> waitFor(final TxnRuntime rt, final java.util.function.BooleanSupplier done,
                                        final int tries) {
        return done.getAsBoolean() || tries <= 0 ? Future.succeededFuture()
            : rt.timers().after(100_000).compose(v -> waitFor(rt, done, tries - 1));
    }

    /**
     * A key-dependent read ({@link Txn#readKeyDependent}, {@link Txn#readForUpdateKeyDependent}: FLAG_NO_DEFER on the
     * wire) is never deferred on a hot record, where an unmarked read ({@code read}, {@code readForUpdate}) there is.
     * Each probe is sent right behind 64 attempts' key-dependent reads of key 5, all in one turn of the loop, so
     * their timestamps are microseconds apart and it arrives with 64 requests in the last 10 ms (32 make a record
     * hot), whatever the machine's load; the participant's count of deferred reads over the whole batch is the
     * probe's (the 64 are marked too: without the flag they would be deferred as well). A batch that left the record
     * cold is run again, up to 8 times. {@code aurogon}, the default variant (deferral, pre-attaching, 2LClock over
     * the compute node's clocks, {@link OneMemoryNode#clocks}: without clocks its begin threw, and the test waited out
     * the node's 30 s bound each time, "the 2LClock hang"). Fails without the Txn API flag
     * (marked reads were plain ones: "marked read: 100 hot deferred 1").
     */
    @Test
    void shouldNeverDeferAKeyDependentReadWhereAnUnmarkedOneOnAHotRecordIsDeferred() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Participant participant = node.services.service(ParticipantService.class).participant();
            final Map<String, Function<Txn, Future<UnsafeBuffer>>> probes = new java.util.LinkedHashMap<>();
            probes.put("marked read", t -> t.readKeyDependent("items", 5));
            probes.put("unmarked read", t -> t.read("items", 5));
            probes.put("marked rmw", t -> t.readForUpdateKeyDependent("items", 5));
            probes.put("unmarked rmw", t -> t.readForUpdate("items", 5));
            final List<String> hot = new ArrayList<>();
            for (final Map.Entry<String, Function<Txn, Future<UnsafeBuffer>>> p : probes.entrySet()) {
                for (int attempt = 0; attempt < 8; attempt++) {
                    final String seen = node.on(rt -> {
                        rt.clocks(node.clocks());
                        final long before = participant.deferredReads();
                        final List<Future<?>> warm = new ArrayList<>();
                        for (int i = 0; i < 64; i++) {
                            final Txn x = AurogonModule.AUROGON.begin(rt, false);
                            warm.add(x.readKeyDependent("items", 5).compose(v -> x.commit()));
                        }
                        final Txn t = AurogonModule.AUROGON.begin(rt, false);
                        final Future<UnsafeBuffer> probed = p.getValue().apply(t);
                        return Future.all(warm).compose(v -> probed).compose(v -> {
                            final String r = p.getKey() + ": " + v.getLong(0) + (participant.hot(TABLE, 5) ? " hot"
                                : " cold") + " deferred " + (participant.deferredReads() - before);
                            return t.abort().map(x -> r);
                        });
                    });
                    if (p.getKey().startsWith("marked")) {
                        assertThat(seen).as("a key-dependent read is never deferred").endsWith("deferred 0");
                    }
                    if (seen.contains(" hot ")) {
                        hot.add(seen);
                        break;
                    }
                }
            }
            assertThat(hot).containsExactly("marked read: 100 hot deferred 0", "unmarked read: 100 hot deferred 1",
                "marked rmw: 100 hot deferred 0", "unmarked rmw: 100 hot deferred 1");
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * DST's chase ({@link AurogonClock#observe}, issue 20's B5h): a participant's answer that saw a timestamp 10 s
     * ahead pulls a DST clock forward to it (no allowance for the one-way delay), so its next timestamp is above the
     * one seen, with this loop's ids; an older or zero timestamp never pulls it back; the host clock ignores it.
     */
    @Test
    void shouldChaseTheLargestTimestampSeenUnderDstOnly() throws Exception {
        final long leadNs = 10_000_000_000L; // 10 s: no stall of a loaded machine lets the host clock catch up
        final List<String> out = shared.on(rt -> {
            final java.util.function.LongSupplier host = () -> rt.clocks() != null ? rt.clocks().hostNs()
                : rt.timers().nowNs();
            final AurogonClock dst = AurogonClock.of(rt, AurogonClock.Mode.DST);
            final AurogonClock plain = AurogonClock.of(rt, AurogonClock.Mode.HOST);
            final long first = dst.next();
            final long ahead0 = dst.aheadNs();
            final long before = host.getAsLong();
            final long seen = AurogonTimestamp.pack(before + leadNs, 9, 9);
            dst.observe(seen);
            plain.observe(seen);
            final long after = host.getAsLong();
            final long ahead = dst.aheadNs();
            assertThat(ahead).isBetween(Math.max(ahead0, before + leadNs - after), Math.max(ahead0, leadNs));
            final long next = dst.next();
            assertThat(next).isGreaterThan(seen);
            assertThat(AurogonTimestamp.server(next)).isEqualTo(AurogonTimestamp.server(first));
            assertThat(AurogonTimestamp.loop(next)).isEqualTo(AurogonTimestamp.loop(first));
            dst.observe(AurogonTimestamp.pack(before + leadNs / 2, 9, 9));
            dst.observe(0);
            final List<String> r = new ArrayList<>();
            r.add("dst ahead kept " + (dst.aheadNs() == ahead));
            r.add("host ahead " + plain.aheadNs());
            r.add("host below seen " + (plain.next() < seen));
            return Future.succeededFuture(r);
        });
        assertThat(out).containsExactly("dst ahead kept true", "host ahead 0", "host below seen true");
    }

    private static byte[] fill(final int bytes, final long key) {
        final byte[] value = new byte[bytes];
        java.util.Arrays.fill(value, (byte) key);
        return value;
    }

    private static byte[] committedValue(final OneMemoryNode node, final long key) throws Exception {
        final Participant participant = node.services.service(ParticipantService.class).participant();
        return AurogonPromotionTest.onLoop(node, () -> {
            final long[][] versions = participant.versions(node.table.schema().id(), key);
            return participant.committedValue(node.table.schema().id(), key, versions[0][0]);
        });
    }

    /**
     * An AUROGON_PRE writer of {@code key} (pre-attached at its read) whose version a recovery commits ({@code
     * committed}) or rolls back before its commit; what happened, in order.
     */
    private static List<String> decidedBeforeItsCommit(final OneMemoryNode node, final long key, final int bytes,
                                                       final boolean committed) throws Exception {
        final int items = node.table.schema().id();
        final byte[] value = fill(bytes, key);
        final List<String> seen = new ArrayList<>();
        return node.on(rt -> {
            rt.onGiveUp(why -> seen.add("gave up"));
            final AurogonTxn writer = (AurogonTxn) AurogonModule.AUROGON_PRE.begin(rt, false);
            rt.recorder(new io.scythe.txn.HistoryRecorder() {
                @Override
                public void committed(final long txnId, final long commitTs, final List<io.scythe.txn.Access> a) {
                    if (txnId == writer.id()) {
                        seen.add("reported committed");
                    }
                }

                @Override
                public void inDoubt(final long txnId, final List<io.scythe.txn.Access> a) {
                    seen.add("reported in doubt");
                }
            });
            return writer.readForUpdate("items", key).compose(v -> {
                writer.write("items", key, new UnsafeBuffer(value), 0, bytes);
                final long ts = writer.timestamp();
                final Future<?> decided;
                if (committed) {
                    decided = CoordinatorRecovery.commitValue(rt, "mn", items, key, ts, new UnsafeBuffer(value), bytes,
                        true).map(status -> {
                            assertThat(status).as("the recovery's COMMIT").isEqualTo(Participant.OK);
                            return null;
                        });
                } else {
                    final UnsafeBuffer rollback = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                    CoordinatorRecovery.fill(rollback, items, 0, key, ts);
                    decided = rt.rocket("mn").compose(r -> r.call(AurogonRpc.ROLLBACK, rollback));
                }
                return decided.compose(x -> writer.commit()).transform(c -> {
                    seen.add(0, c.succeeded() ? "committed" : c.cause() instanceof io.scythe.txn.OutcomeUnknownException
                        ? "outcome unknown" : "failed " + c.cause());
                    if (c.failed()) {
                        return Future.succeededFuture(seen);
                    }
                    final Txn next = AurogonModule.AUROGON_PRE.begin(rt, false);
                    return next.readForUpdate("items", key + 1).compose(w -> {
                        next.write("items", key + 1, new UnsafeBuffer(fill(bytes, key + 1)), 0, bytes);
                        return next.commit();
                    }).transform(n -> {
                        seen.add(n.succeeded() ? "next committed" : "next failed " + n.cause());
                        return Future.succeededFuture(seen);
                    });
                });
            });
        });
    }

    /**
     * The coordinator fails a transaction at its last attempt once its abort is over, and Aurogon's abort waits for
     * the READs still in flight first (issue 20, stop 57's note: unchecked whether anything leaks so). Key 14's
     * pre-attaching READ is run at once (its PENDING version installed) but its answer held back 20 ms, while key 15's
     * pre-attaching READ is refused at once (a read above the attempt's timestamp returned the version below: early
     * abort), with one attempt allowed. The failure reaches the client only after the held answer came and the abort
     * rolled that version back: no PENDING version is left. The rts the late READ raised (to the attempt's timestamp)
     * stays, as every aborted attempt's reads' do (§2.5: a rollback removes PENDING versions only); it can refuse a
     * later install below it, never admit a wrong one. A READ that gets no answer at all fails its attempt UNANSWERED
     * with its version counted as installed: the ROLLBACK removes it, or leaves a tombstone that refuses the READ if it
     * lands later ({@code ParticipantTest#aRollbackAheadOfItsInstallLeavesATombstoneThatRefusesTheLateInstall}; no
     * coordinator-level test of the unanswered case). Fails when the abort does not wait for the READs in flight
     * ({@code AurogonTxn#abort}): the failure comes first and key 14's version is left pending.
     */
    @Test
    void shouldFailTheLastAttemptOnlyAfterItsLateReadsVersionWasRolledBack() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final List<String> seen = new ArrayList<>();
        final long[] ts = new long[1];
        final String failure = node.on(rt -> {
            node.server.handle(AurogonRpc.READ, (request, responder) -> {
                final org.agrona.DirectBuffer p = request.payload();
                final int at = request.payloadOffset();
                final long key = p.getLong(at + AurogonRpc.KEY_OFFSET);
                participant.read(p.getInt(at + AurogonRpc.TABLE_OFFSET), key, p.getLong(at + AurogonRpc.TS_OFFSET),
                    p.getInt(at + AurogonRpc.FLAGS_OFFSET), (status, wts, value) -> {
                        if (key != 14) {
                            service.replyValue(responder, status, wts, value, 0);
                            return;
                        }
                        seen.add("key 14 read, pending " + pending(participant, 14));
                        rt.timers().after(20_000_000L).onComplete(t -> {
                            seen.add("key 14 answered");
                            service.replyValue(responder, status, wts, value, 0);
                        });
                    });
            });
            return new io.scythe.txn.Coordinator(rt, AurogonModule.AUROGON_PRE, 1).run(txn -> {
                ts[0] = ((AurogonTxn) txn).timestamp();
                final Txn above = AurogonModule.AUROGON_PRE.begin(rt, false);
                return above.read("items", 15).compose(v -> above.commit()).compose(c -> {
                    final Future<UnsafeBuffer> held = txn.readForUpdate("items", 14);
                    return txn.readForUpdate("items", 15).compose(v -> held);
                });
            }).transform(outcome -> {
                seen.add("failed, pending " + pending(participant, 14));
                return Future.succeededFuture(outcome.succeeded() ? "committed" : outcome.cause().getMessage());
            }).eventually(() -> {
                service.register(node.server); // the real READ again, whatever happened
                return Future.succeededFuture();
            });
        });
        assertThat(failure).contains("already returned the version below");
        assertThat(seen).containsExactly("key 14 read, pending true", "key 14 answered", "failed, pending false");
        final long[][] versions = AurogonPromotionTest.onLoop(node, () -> participant.versions(TABLE, 14));
        assertThat(java.util.Arrays.stream(versions).filter(v -> v[2] == 1).count()).as("versions left pending")
            .isZero();
        assertThat(versions[0][1]).as("the late READ's rts raise stays").isGreaterThanOrEqualTo(ts[0]);
        assertThat(participant.violation()).isNull();
    }

    /**
     * SPS mode at the coordinator (§4.4, {@code aurogon:sps}): T1 commits key 3 (or 4) from 100 to 1 on a clock 10 s
     * ahead (50 ms before: CI 217, at load ~39, took longer than that between T1 and T2, so T2's host clock was past T1); T2 begins once T1's commit was reported, on the host clock (its timestamp below T1's: clocks that far
     * apart are what SPS guards against, here by construction), and reads the key. Without SPS it reads 100, a stale
     * read: T1 precedes it in real time, not in timestamp order. With SPS the READ is answered SPS_STALE (rule 1) and
     * T2 aborts. Fails without {@link Participant#FLAG_SPS} on the READ.
     */
    @Test
    void shouldRefuseAStaleReadAfterARealTimeEarlierCommitOnlyInSpsMode() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            assertThat(afterACommitAhead(node, 3, false)).isEqualTo("T1 committed, T2 read 100 below T1");
            assertThat(afterACommitAhead(node, 4, true)).isEqualTo("T1 committed, T2 aborted sps-stale-read");
            // Through the coordinator: the abort floors T2's clock at T1's version, its second attempt reads it
            // (review, stop 58: before, every retry stayed below it until real time covered the offset).
            assertThat(afterACommitAhead(node, 5, true, 2)).isEqualTo("T1 committed, T2 read 1 in 2 attempts");
            final long[] refusals = AurogonPromotionTest.onLoop(node,
                () -> node.services.service(ParticipantService.class).participant().spsRefusals());
            assertThat(refusals).containsExactly(2, 0);
        }
    }

    /** How far ahead T1's clock runs: more than any stall between T1's commit and T2's read on a loaded machine. */
    private static final long AHEAD_NS = 10_000_000_000L;

    /** T1 writes {@code key} on a clock 10 s ahead, then T2 (SPS or not) reads it on the host clock: what T2 saw. */
    private static String afterACommitAhead(final OneMemoryNode node, final long key, final boolean sps)
        throws Exception {
        return afterACommitAhead(node, key, sps, 0);
    }

    /** As {@link #afterACommitAhead(OneMemoryNode, long, boolean)}; T2 run by a coordinator of {@code attempts}. */
    private static String afterACommitAhead(final OneMemoryNode node, final long key, final boolean sps,
                                            final int attempts) throws Exception {
        return afterACommitAhead(node, key, sps, attempts, false);
    }

    /**
     * As {@link #afterACommitAhead(OneMemoryNode, long, boolean, int)}; when {@code writes}, T2 reads the key for
     * update and writes 2 instead.
     */
    private static String afterACommitAhead(final OneMemoryNode node, final long key, final boolean sps,
                                            final int attempts, final boolean writes) throws Exception {
        final UnsafeBuffer two = new UnsafeBuffer(new byte[8]);
        two.putLong(0, 2);
        final UnsafeBuffer one = new UnsafeBuffer(new byte[8]);
        one.putLong(0, 1);
        return node.on(rt -> {
            AurogonClock.of(rt, AurogonClock.Mode.DST).floor(AurogonTimestamp.pack(rt.timers().nowNs()
                + AHEAD_NS, 0, 1));
            final Txn t1 = new AurogonTxn(rt, new AurogonTxn.Techniques("ahead", true, false, AurogonClock.Mode.DST));
            final AurogonTxn.Techniques behind = new AurogonTxn.Techniques("behind", true, false,
                AurogonClock.Mode.HOST);
            return t1.readForUpdate("items", key).compose(v -> {
                t1.write("items", key, one, 0, 8);
                return t1.commit();
            }).compose(ts1 -> {
                if (attempts > 0) {
                    return new io.scythe.txn.Coordinator(rt, Protocol.of("behind", (r, hint) -> new AurogonTxn(r,
                        sps ? behind.withSps() : behind)), attempts).run(t2 -> writes
                            ? t2.readForUpdate("items", key).map(v -> {
                                t2.write("items", key, two, 0, 8);
                                return two;
                            })
                            : t2.read("items", key))
                        .map(o -> "T2 " + (writes ? "wrote " : "read ") + o.result().getLong(0) + " in "
                            + o.attempts() + " attempts")
                        .recover(e -> io.vertx.core.Future.succeededFuture(e instanceof io.scythe.txn.AbortException a
                            ? "T2 aborted " + a.reason().label() + " in " + a.attempts() + " attempts"
                            : "T2 failed " + e));
                }
                final Txn t2 = new AurogonTxn(rt, sps ? behind.withSps() : behind);
                final io.vertx.core.Future<String> done = writes
                    ? t2.readForUpdate("items", key).compose(v -> {
                        t2.write("items", key, two, 0, 8);
                        return t2.commit().map(ts2 -> "T2 wrote 2" + (ts2 < ts1 ? " below T1" : " above T1"));
                    })
                    : t2.read("items", key).compose(v -> t2.commit().map(ts2 -> "T2 read " + v.getLong(0)
                        + (ts2 < ts1 ? " below T1" : " above T1")));
                return done.recover(e -> t2.abort().map(x ->
                    e instanceof io.scythe.txn.AbortException a ? "T2 aborted " + a.reason().label()
                        : "T2 failed " + e));
            }).map(s -> "T1 committed, " + s);
        });
    }

    /**
     * SPS rule 2 and its retry floor (aurogon23): as above, but T2 reads key 6 (to 9) for update and writes 2. T1 read
     * the key before writing it (our API reads every key it writes), so the version below T1's has its rts at T1's
     * timestamp and the install rule refuses T2's pre-attaching READ without SPS too; with SPS rule 2 refuses it first
     * (SPS_IMMORTAL: nothing installed) and its answer carries T1's version, where the coordinator floors the clock, so
     * the second attempt writes above it and the value read afterwards is T2's. Without SPS the refusal carries no
     * floor and every retry stays below T1's version for the 10 s: the 2 attempts run out. Fails without the floor.
     */
    @Test
    void shouldRefuseAnImmortalWriteOnlyInSpsModeAndRetryItAboveTheCommittedVersion() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            assertThat(afterACommitAhead(node, 6, false, 0, true))
                .isEqualTo("T1 committed, T2 aborted preattach-refused");
            assertThat(afterACommitAhead(node, 7, true, 0, true))
                .isEqualTo("T1 committed, T2 aborted sps-immortal-write");
            assertThat(afterACommitAhead(node, 8, true, 2, true)).isEqualTo("T1 committed, T2 wrote 2 in 2 attempts");
            assertThat(afterACommitAhead(node, 9, false, 2, true))
                .isEqualTo("T1 committed, T2 aborted preattach-refused in 2 attempts");
            final String[] after = new String[4];
            for (int key = 6; key <= 9; key++) {
                final long k = key;
                after[key - 6] = node.on(rt -> {
                    // Above T1 and above key 8's second attempt (just above T1's version).
                    AurogonClock.of(rt, AurogonClock.Mode.DST).floor(AurogonTimestamp.pack(rt.timers().nowNs()
                        + 2 * AHEAD_NS, 0, 1));
                    final Txn t = new AurogonTxn(rt, new AurogonTxn.Techniques("ahead", true, false,
                        AurogonClock.Mode.DST));
                    return t.read("items", k).compose(v -> t.commit().map(x -> String.valueOf(v.getLong(0))));
                });
            }
            assertThat(after).as("only key 8's T2, SPS's floored retry, wrote above T1")
                .containsExactly("1", "1", "2", "1");
            final long[] refusals = AurogonPromotionTest.onLoop(node,
                () -> node.services.service(ParticipantService.class).participant().spsRefusals());
            assertThat(refusals).containsExactly(0, 2);
        }
    }

    /**
     * A pre-attaching READ whose reply fails after the participant installed its pending version (as a reply too
     * large for one bucket did), in an attempt that had pre-attached another key before: the abort rolls both back,
     * so a later reader of either key is answered instead of parking for ever.
     */
    @Test
    void shouldRollBackAPreattachedVersionWhoseReadFailedSoReadersParkedOnItFinish() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final List<String> outcomes = new ArrayList<>();
        node.on(rt -> {
            final Txn first = AurogonModule.AUROGON_PRE.begin(rt, false);
            return first.readForUpdate("items", 1).compose(v -> {
                assertThat(v.getLong(0)).isEqualTo(100);
                assertThat(pending(participant, 1)).isTrue();
                // From now on the participant runs each READ (its pre-attach included), then the reply fails.
                node.server.handle(AurogonRpc.READ, (request, responder) -> {
                    final int at = request.payloadOffset();
                    participant.read(request.payload().getInt(at + AurogonRpc.TABLE_OFFSET),
                        request.payload().getLong(at + AurogonRpc.KEY_OFFSET),
                        request.payload().getLong(at + AurogonRpc.TS_OFFSET),
                        request.payload().getInt(at + AurogonRpc.FLAGS_OFFSET),
                        (status, wts, value) -> responder.fail(AurogonRpc.BAD_REQUEST, "injected: reply lost"));
                });
                return first.readForUpdate("items", 2);
            }).transform(read -> {
                outcomes.add(read.succeeded() ? "read" : read.cause() instanceof RpcException ? "rpc error"
                    : "failed " + read.cause());
                assertThat(pending(participant, 2)).as("installed before the reply failed").isTrue();
                service.register(node.server); // the real READ again
                // A reader above both pending versions parks on them until the abort decides them.
                final Txn reader = AurogonModule.AUROGON_PRE.begin(rt, false);
                final Future<Long> sum = reader.read("items", 1).compose(a -> reader.read("items", 2)
                    .map(b -> a.getLong(0) + b.getLong(0)));
                return first.abort().compose(aborted -> {
                    outcomes.add("aborted");
                    return sum;
                }).compose(s -> {
                    outcomes.add("sum " + s);
                    return reader.commit();
                });
            });
        });
        assertThat(outcomes).containsExactly("rpc error", "aborted", "sum 200");
        assertThat(pending(participant, 1)).isFalse();
        assertThat(pending(participant, 2)).isFalse();
        assertThat(participant.violation()).isNull();
    }

    /**
     * An INSTALL whose handler installs the pending version and then fails (HANDLER_FAILED, not a timeout; review of
     * aurosplit4, 3): the request landed, so the abort rolls the version back; a later reader is answered at once.
     * Failed before (only a timeout or a broken connection marked the access locked): the version stayed pending
     * until an orphan recovery, the reader parked on it.
     */
    @Test
    void shouldRollBackAnInstallWhoseHandlerFailedAfterInstalling() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final List<String> outcomes = new ArrayList<>();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, 7);
        node.on(rt -> {
            final Txn writer = AurogonModule.AUROGON_BASE.begin(rt, false);
            return writer.read("items", 8).compose(v -> {
                writer.write("items", 8, value, 0, 8);
                node.server.handle(AurogonRpc.INSTALL, (request, responder) -> {
                    final int at = request.payloadOffset();
                    participant.install(request.payload().getInt(at),
                        request.payload().getLong(at + AurogonRpc.KEY_OFFSET),
                        request.payload().getLong(at + AurogonRpc.TS_OFFSET));
                    throw new IllegalStateException("injected: failed after installing");
                });
                return writer.commit();
            }).transform(c -> {
                outcomes.add(c.succeeded() ? "committed" : "failed");
                service.register(node.server); // the real INSTALL again
                outcomes.add(pending(participant, 8) ? "pending left" : "rolled back");
                final Txn reader = AurogonModule.AUROGON_BASE.begin(rt, false);
                return reader.read("items", 8).compose(v -> reader.commit().map(ts -> v.getLong(0)));
            }).map(read -> {
                outcomes.add("read " + read);
                return null;
            });
        });
        assertThat(outcomes).containsExactly("failed", "rolled back", "read 100");
        assertThat(participant.violation()).isNull();
    }

    /**
     * A READ parked on a suspect (a version whose coordinator fell silent past the orphan lease) is answered ORPHAN,
     * and the reader resolves it through the backups; when the resolution's calls get no answer (a split cut the
     * resolver off, issue 20), the attempt aborts retryably ({@link AurogonAborts#UNANSWERED}) instead of failing with
     * the RpcException as an error; the suspect stays pending, and once the node answers again the next reader
     * resolves it (no backup holds it: rolled back) and reads the committed value.
     */
    @Test
    void shouldAbortAReadWhoseOrphansRecoveryGetsNoAnswerAndResolveItOnceAnswered() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Table copy = AurogonPromotionTest.backupCopy(node);
            final Catalog catalog = new Catalog().add("items", List.of(new Catalog.Partition("mn",
                node.table.describe(), List.of(new Catalog.Replica("mn", copy.describe())))));
            final ParticipantService service = node.services.service(ParticipantService.class);
            final Participant participant = service.participant();
            final int items = node.table.schema().id();
            final long key = 3;
            final long orphanTs = AurogonTimestamp.pack(1_000_000, 9, 0); // a coordinator heard once, then silent
            final UnsafeBuffer install = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
            CoordinatorRecovery.fill(install, items, 0, key, orphanTs);
            assertThat(AurogonPromotionTest.call(node, AurogonRpc.INSTALL, install)).isEqualTo(Participant.OK);
            final java.util.concurrent.atomic.AtomicInteger unanswered = new java.util.concurrent.atomic.AtomicInteger();
            AurogonPromotionTest.onLoop(node, () -> {
                node.server.handle(AurogonRpc.SUSPECTS, (request, responder) -> unanswered.incrementAndGet());
                return null;
            });
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (AurogonPromotionTest.onLoop(node, participant::suspect) != orphanTs // past the lease: a suspect
                && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(AurogonPromotionTest.onLoop(node, participant::suspect)).as("a suspect").isEqualTo(orphanTs);
            // A client whose calls time out (the node's own has no deadline): the unanswered SUSPECTS fails TIMED_OUT.
            // 2 s, not 200 ms: the TSO fetch and the READ, which must be answered, could take 200 ms when loaded.
            final io.scythe.rrpc.RrpcClient bounded = new io.scythe.rrpc.RrpcClient(node.vertx,
                node.fabric.attachNow("cn-bounded"), new io.scythe.rrpc.RrpcOptions().callTimeoutNs(2_000_000_000L));
            final String first = node.onLoop(() -> {
                final TxnRuntime rt = new TxnRuntime(catalog, bounded, LoopTimers.current(), new TsoGroup(64,
                    new DirectTsoSource(node.counter, () -> bounded.oneSided("tso"))),
                    io.scythe.hotspot.Watermarks.DEFAULT, 1L << 40);
                final Txn reader = AurogonModule.AUROGON_BASE.begin(rt, false);
                return reader.read("items", key).transform(ar -> reader.abort().transform(x ->
                    Future.succeededFuture(ar.succeeded() ? "read " + ar.result().getLong(0)
                        : ar.cause() instanceof io.scythe.txn.AbortException a ? "aborted " + a.reason() + ": "
                        + a.getMessage() : "failed " + ar.cause())));
            });
            assertThat(first).startsWith("aborted " + AurogonAborts.UNANSWERED + ": ")
                .contains("the recovery of a suspect parked on by the READ of key 3");
            assertThat(unanswered.get()).as("the recovery asked, unanswered").isPositive();
            assertThat(pendingAt(participant, items, key, orphanTs)).as("left pending, not decided blind").isTrue();
            AurogonPromotionTest.onLoop(node, () -> {
                service.register(node.server); // the node answers SUSPECTS again
                return null;
            });
            final String second = node.onCatalog(catalog, rt -> {
                final Txn reader = AurogonModule.AUROGON_BASE.begin(rt, false);
                return reader.read("items", key).compose(v -> reader.commit().map(ts -> "read " + v.getLong(0)));
            });
            assertThat(second).isEqualTo("read 100");
            assertThat(pendingAt(participant, items, key, orphanTs)).as("resolved: rolled back").isFalse();
            assertThat(participant.violation()).isNull();
        }
    }

    /**
     * A coordinator whose clock lags the node's newest timestamps by more than the tombstones' pruning lag (here
     * other coordinators' attempts rolled back there 10 and 20 s ahead of it, so the watermark is 10 s ahead: more
     * than any stall between reading the clock and the first attempt's begin; at 100 ms a loaded machine outran it
     * and the first attempt began above the watermark and committed at once, issue 23 §1):
     * its INSTALL is answered STALE with a floor, its clock is floored above the watermark, and the next attempt on
     * that clock commits. Fails before (review of aurofix, finding 1): every attempt was REFUSED (INSTALL_REFUSED),
     * retrying from the same lagging clock, for as long as the clock lagged.
     */
    @Test
    void shouldCommitAfterOneStaleAnswerWhenItsClockLagsTheTombstonesWatermark() throws Exception {
        final long aheadNs = 10_000_000_000L;
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Participant participant = node.services.service(ParticipantService.class).participant();
            final int items = node.table.schema().id();
            final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
            value.putLong(0, 4242);
            final long[] stamps = new long[2];
            final List<String> outcomes = node.on(rt -> {
                final List<String> seen = new ArrayList<>();
                final Txn probe = AurogonModule.AUROGON_BASE.begin(rt, false);
                final long nowNs = AurogonTimestamp.clockNs(((AurogonTxn) probe).timestamp());
                return probe.abort().compose(x -> {
                    // Rolled back here before their INSTALLs arrived: tombstones ahead of this clock, the first one
                    // dropped by the second's sweep (it is more than the pruning lag behind): the watermark.
                    participant.rollback(items, 30, AurogonTimestamp.pack(nowNs + aheadNs, 9, 0));
                    participant.rollback(items, 31, AurogonTimestamp.pack(nowNs + 2 * aheadNs, 9, 0));
                    stamps[0] = participant.tombstoneWatermark();
                    return attempt(rt, value).compose(first -> {
                        seen.add(first);
                        return attempt(rt, value);
                    }).map(second -> {
                        seen.add(second);
                        return seen;
                    });
                });
            });
            assertThat(stamps[0]).as("the watermark, 10 s ahead").isPositive();
            assertThat(outcomes).hasSize(2);
            assertThat(outcomes.get(0)).startsWith("aborted " + AurogonAborts.STALE + ": ");
            assertThat(outcomes.get(1)).startsWith("committed at ");
            final long committed = Long.parseLong(outcomes.get(1).substring("committed at ".length()));
            assertThat(committed).as("above the watermark").isGreaterThan(stamps[0]);
            assertThat(AurogonPromotionTest.onLoop(node, () -> participant.committedAt(items, 13, committed)))
                .isTrue();
            assertThat(participant.violation()).isNull();
        }
    }

    /** One attempt updating key 13 to {@code value}: "committed at ts" or "aborted reason: why". */
    private static Future<String> attempt(final TxnRuntime rt, final UnsafeBuffer value) {
        final Txn txn = AurogonModule.AUROGON_BASE.begin(rt, false); // reads, then INSTALLs at commit
        return txn.read("items", 13).compose(v -> {
            txn.write("items", 13, value, 0, 8);
            return txn.commit();
        }).transform(c -> Future.succeededFuture(c.succeeded() ? "committed at " + c.result()
            : c.cause() instanceof io.scythe.txn.AbortException a ? "aborted " + a.reason() + ": " + a.getMessage()
            : "failed " + c.cause()));
    }

    private static boolean pendingAt(final Participant participant, final int table, final long key, final long ts) {
        return AurogonPromotionTest.pendingAt(participant, table, key, ts);
    }

    /**
     * The one resend rule ({@link AurogonTxn#mayResend}, used by untilAnswered and decideAgain): an unanswered request
     * is sent at most the limit's times, and none once the budget from the first send is spent; an answer, or a
     * failure that is no lack of answer, ends it at once.
     */
    @Test
    void shouldResendAnUnansweredRequestUpToTheLimitAndWithinTheBudgetOnly() {
        final long[] now = {0};
        final io.scythe.txn.runtime.Timers timers = steppedTimers(now, delayNs -> { });
        final int[] sends = {0};
        final long callBoundNs = 100_000_000L; // each send waits its call bound (a cluster node's: long)
        final java.util.function.Supplier<Future<io.scythe.rrpc.RpcReply>> unanswered = () -> {
            sends[0]++;
            now[0] += callBoundNs;
            return Future.failedFuture(new RpcException(RpcException.TIMED_OUT, "no reply"));
        };
        assertThat(AurogonTxn.untilAnswered(timers, unanswered, 1, 64, AurogonTxn.RESEND_BUDGET_NS).failed()).isTrue();
        assertThat(sends[0]).as("bounded by the budget").isEqualTo(20);
        sends[0] = 0;
        now[0] = 0;
        assertThat(AurogonTxn.untilAnswered(timers, unanswered, 1, 5, Long.MAX_VALUE).failed()).isTrue();
        assertThat(sends[0]).as("bounded by the count").isEqualTo(5);
        assertThat(AurogonTxn.mayResend(63, 64, AurogonTxn.RESEND_BUDGET_NS - 1, AurogonTxn.RESEND_BUDGET_NS))
            .isTrue();
        assertThat(AurogonTxn.mayResend(64, 64, 0, AurogonTxn.RESEND_BUDGET_NS)).isFalse();
        assertThat(AurogonTxn.mayResend(1, 64, AurogonTxn.RESEND_BUDGET_NS, AurogonTxn.RESEND_BUDGET_NS)).isFalse();
    }

    /**
     * A read parked on a suspect whose recovery left it in doubt ({@link CoordinatorRecovery.InDoubt}) waits and
     * reads again, a quarter of the bound apart, then its attempt aborts (retryable, {@link AurogonAborts#IN_DOUBT});
     * any other failure passes as it was. Before, every such reader failed with the recovery's IllegalStateException.
     */
    @Test
    void shouldWaitABoundOnASuspectLeftInDoubtThenAbort() {
        final List<Long> waits = new ArrayList<>();
        final io.scythe.txn.runtime.Timers timers = steppedTimers(new long[] {5_000}, waits::add);
        final long[] since = {-1};
        final CoordinatorRecovery.InDoubt doubt = new CoordinatorRecovery.InDoubt("left in doubt");
        Future<Void> f = AurogonTxn.waitInDoubt(timers, doubt, since);
        int rereads = 0;
        while (f.succeeded()) {
            rereads++;
            f = AurogonTxn.waitInDoubt(timers, doubt, since);
        }
        assertThat(rereads).isEqualTo((int) (AurogonTxn.IN_DOUBT_WAIT_NS / AurogonTxn.IN_DOUBT_RETRY_NS));
        assertThat(waits).containsOnly(AurogonTxn.IN_DOUBT_RETRY_NS);
        assertThat(f.cause()).isInstanceOf(io.scythe.txn.AbortException.class).hasMessageContaining("left in doubt");
        assertThat(((io.scythe.txn.AbortException) f.cause()).reason()).isEqualTo(AurogonAborts.IN_DOUBT);
        final IllegalStateException other = new IllegalStateException("no backups");
        assertThat(AurogonTxn.waitInDoubt(timers, other, new long[] {-1}).cause()).isSameAs(other);
    }
    /**
     * Issue 20's give-up path: an attempt fenced at its backup (which never held it: here "mn" plays a backup that
     * another backup's copy of the attempt never reached), whose DISCARD there gets no answer, while two later
     * attempts of the same loop commit and the backup forgets decisions (it remembers 1 here). The first attempt's
     * timestamp stays under the loop's low-water ({@link Heartbeats#stick}), so the backup keeps the later decisions
     * pinned and answers a resolver's HOLDS of it ABORTED (fencing it: a backup holding it in full would then roll
     * it back), not FORGOTTEN; once its DISCARD is answered (sent again in the background) it is unstuck. Before, the
     * abort closed the attempt: the next REPLICATEs carried a low-water above it, the backup forgot the second one's
     * decision and answered FORGOTTEN, and every resolver yielded, leaving the other backup's copy undecided.
     */
    @Test
    void shouldKeepTheLowWaterAtAnAbortWhoseDiscardABackupNeverAnswered() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Catalog catalog = withBackup();
        AurogonPromotionTest.onLoop(node, () -> service.backups().remembered = 1);
        final List<String> outcomes = new ArrayList<>();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        final io.scythe.rrpc.RpcHandler lost = (request, responder) -> responder.fail(AurogonRpc.BAD_REQUEST,
            "injected: DISCARD lost");
        on(node, catalog, rt -> {
            final Txn first = AurogonModule.AUROGON_PRE.begin(rt, false);
            final Txn second = AurogonModule.AUROGON_PRE.begin(rt, false);
            final Txn third = AurogonModule.AUROGON_PRE.begin(rt, false);
            final long ts = ((AurogonTxn) first).timestamp();
            final Heartbeats heartbeats = Heartbeats.of(rt);
            // Plain reads: the writes are installed at commit, so no pending version waits (a lease is 1 ms).
            return first.read("items", 5).compose(v -> second.read("items", 6))
                .compose(v -> third.read("items", 7)).compose(v -> {
                    first.write("items", 5, value, 0, 8);
                    second.write("items", 6, value, 0, 8);
                    third.write("items", 7, value, 0, 8);
                    node.server.handle(AurogonRpc.REPLICATE, (request, responder) -> status(responder,
                        Backups.FENCED));
                    node.server.handle(AurogonRpc.DISCARD, lost);
                    return first.commit().transform(c -> {
                        outcomes.add(c.succeeded() ? "committed" : "aborted");
                        service.register(node.server); // the real REPLICATE, the first one's DISCARD still lost
                        node.server.handle(AurogonRpc.DISCARD, lost);
                        outcomes.add("stuck " + heartbeats.stuck());
                        return second.commit();
                    });
                }).compose(v -> third.commit()).compose(v -> rt.rocket("mn").compose(rocket -> {
                    final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                    request.putLong(AurogonRpc.TS_OFFSET, ts);
                    return rocket.call(AurogonRpc.HOLDS, request);
                })).compose(reply -> {
                    final int state = reply.payload().getInt(0);
                    outcomes.add(state == Backups.FORGOTTEN ? "forgotten" : state == Backups.ABORTED ? "fenced"
                        : "holds " + state);
                    service.register(node.server); // its DISCARD answered from now on
                    // Sent again a period apart: two periods, or more on a loaded machine (timers run late).
                    return unstuck(rt, heartbeats, 4_000);
                }).map(v -> outcomes.add("stuck " + heartbeats.stuck()));
        });
        assertThat(outcomes).containsExactly("aborted", "stuck 1", "fenced", "stuck 0");
        assertThat(AurogonPromotionTest.onLoop(node, () -> service.backups().pinned())).as("kept over the low-water")
            .isPositive();
    }

    /**
     * §4.5's commit order (issue 20, B6: covered only through the recovery tests before): every backup holds the
     * writes (REPLICATE answered) before any COMMIT reaches a primary. The backup's answer is held back 20 ms; all that
     * time the version at the primary stays pending, and it is committed only after. A COMMIT sent beside the
     * REPLICATE (or before its answer) would have committed it while the answer was held back: a coordinator dying
     * then leaves a commit no backup can redo.
     */
    @Test
    void shouldCommitAtNoPrimaryBeforeEveryBackupAnsweredItsReplicate() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final Catalog catalog = withBackup();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, 77);
        final List<String> seen = new ArrayList<>();
        final String outcome = on(node, catalog, rt -> {
            final Txn txn = AurogonModule.AUROGON_PRE.begin(rt, false);
            return txn.read("items", 11).compose(v -> {
                txn.write("items", 11, value, 0, 8);
                node.server.handle(AurogonRpc.REPLICATE, (request, responder) -> {
                    final Replicate replicate = Replicate.of(request);
                    seen.add("replicate, pending " + pending(participant, 11));
                    rt.timers().after(20_000_000L).onComplete(t -> {
                        seen.add("20 ms later, pending " + pending(participant, 11));
                        status(responder, replicate.takenAt(service));
                    });
                });
                return txn.commit().transform(c -> Future.succeededFuture(c.succeeded() ? "committed"
                    : c.cause().getClass().getSimpleName() + ": " + c.cause().getMessage()));
            }).eventually(() -> {
                service.register(node.server);
                return Future.succeededFuture();
            });
        });
        assertThat(outcome).isEqualTo("committed");
        assertThat(seen).as("the primary's version stays pending until its backup answered the REPLICATE")
            .containsExactly("replicate, pending true", "20 ms later, pending true");
        assertThat(AurogonPromotionTest.onLoop(node, () -> pending(participant, 11))).as("committed after").isFalse();
    }

    /**
     * An abort after replicating: its DISCARD is marked at the backups before any pending version is rolled back at a
     * primary, and a backup that answers FENCED (a recovery APPLIED it there, deciding to commit: every live share
     * held after a REPLICATE's reply was lost with a memory node) leaves the primaries to that recovery's COMMITs.
     * Fails before (review, stop 45, a chaos run's "DISCARD on mn2 answered -10"): the ROLLBACKs went out beside the
     * DISCARDs, so the version was rolled back at its primary under the recovery's commit (a partial commit); and the
     * client was told "not serving" (never committed: it would resend) while the loop gave up.
     */
    @Test
    void shouldNotRollBackAPrimaryWhenABackupAnswersTheAbortsDiscardAsApplied() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final Catalog catalog = withBackup();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        final long[] ts = new long[1];
        final String outcome = on(node, catalog, rt -> {
            final Txn txn = AurogonModule.AUROGON_PRE.begin(rt, false);
            ts[0] = ((AurogonTxn) txn).timestamp();
            return txn.read("items", 9).compose(v -> {
                txn.write("items", 9, value, 0, 8);
                // The backup takes the REPLICATE and a recovery APPLIES it there (deciding to commit), but the
                // reply is lost to the coordinator (as with a memory node's death): here, answered FENCED, it aborts.
                node.server.handle(AurogonRpc.REPLICATE, (request, responder) -> {
                    final Replicate replicate = Replicate.of(request);
                    replicate.takenAt(service);
                    service.backups().apply(replicate.ts());
                    status(responder, Backups.FENCED);
                });
                return txn.commit().transform(c -> {
                    String r = c.succeeded() ? "committed"
                        : c.cause().getClass().getSimpleName() + ": " + c.cause().getMessage();
                    try {
                        AurogonModule.AUROGON_PRE.begin(rt, false).abort();
                    } catch (final io.scythe.txn.NotServingException gaveUp) {
                        r += " | the loop gave up";
                    }
                    return Future.succeededFuture(r);
                });
            }).eventually(() -> {
                service.register(node.server);
                return Future.succeededFuture();
            });
        });
        // Outcome unknown, not "not serving" (which promises it never committed: a client would send it again),
        // and the loop goes on: the transaction is the recovery's.
        assertThat(outcome).startsWith("OutcomeUnknownException").contains("answered its DISCARD FENCED");
        assertThat(outcome).as("the loop goes on").doesNotContain("the loop gave up");
        final long[][] versions = AurogonPromotionTest.onLoop(node, () -> participant.versions(TABLE, 9));
        final boolean kept = java.util.Arrays.stream(versions).anyMatch(v -> v[0] == ts[0]);
        AurogonPromotionTest.onLoop(node, () -> participant.rollback(TABLE, 9, ts[0])); // the shared node, clean
        assertThat(kept).as("its version at the primary left to the recovery that applied it (pending, or committed "
            + "by it), never rolled back under it: " + java.util.Arrays.deepToString(versions)).isTrue();
    }

    /**
     * Review of aurosplit4 (2): a recovery committed the attempt while its coordinator was cut off, and the version
     * at its timestamp was reclaimed at the primary (newer commits past maxVersions) before the coordinator's COMMIT
     * landed: NOT_PENDING. Its backup answers HOLDS COMMITTED, so the commit is done: reported committed, the loop
     * goes on. Without backups a NOT_PENDING stays in doubt
     * ({@link #shouldFinishACommitARecoveryCompletedMeanwhileAndGoOn}).
     * Failed before: OutcomeUnknownException ("answered -N") and the loop gave up.
     */
    @Test
    void shouldTakeACommitAnsweredNotPendingForDoneWhenABackupHoldsItCommitted() throws Exception {
        // A node of its own (issue 23 §1): on the shared one its INSTALL was once refused under load ("a read above
        // ... already returned the version below"), and this scenario run 300 times over on one node beside two busy
        // loops was refused 15 times (alone on a fresh node each time: see the report). Every runtime (one per test,
        // each with a clock of its own) leaves its reads' rts and its rollbacks' tombstones on a shared participant.
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            shouldTakeACommitAnsweredNotPendingForDone(node, withBackup(node));
        }
    }

    private static void shouldTakeACommitAnsweredNotPendingForDone(final OneMemoryNode node, final Catalog catalog)
        throws Exception {
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Participant participant = service.participant();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        final String outcome = on(node, catalog, rt -> {
            final Txn txn = AurogonModule.AUROGON_PRE.begin(rt, false);
            final long ts = ((AurogonTxn) txn).timestamp();
            return txn.read("items", 10).compose(v -> {
                txn.write("items", 10, value, 0, 8);
                // The recovery's APPLY at the backup, then its version gone at the primary, as the COMMIT lands.
                node.server.handle(AurogonRpc.COMMIT, (request, responder) -> {
                    service.backups().apply(ts);
                    participant.rollback(TABLE, 10, ts);
                    status(responder, Participant.NOT_PENDING);
                });
                return txn.commit().transform(c -> {
                    service.register(node.server);
                    String r = c.succeeded() ? "committed"
                        : c.cause().getClass().getSimpleName() + ": " + c.cause().getMessage();
                    try {
                        AurogonModule.AUROGON_PRE.begin(rt, false).abort();
                    } catch (final io.scythe.txn.NotServingException gaveUp) {
                        r += " | the loop gave up";
                    }
                    return Future.succeededFuture(r);
                });
            });
        });
        assertThat(outcome).isEqualTo("committed");
        assertThat(pending(participant, 10)).isFalse();
        assertThat(participant.violation()).isNull();
    }

    /**
     * A commit whose APPLY a live backup answers with an error every time (as a backup's apply throwing did): an error
     * is no answer (the backup may still hold the transaction undecided), so its timestamp stays stuck, and after
     * {@link AurogonTxn#DECIDE_AGAIN_LIMIT} tries a quarter lease apart (4 here) the loop gives up, so the decisions
     * the backups pin for it stop growing. Before, the APPLY went again every quarter lease for good and the loop
     * went on (no give-up: this waited out its bound, "no give-up after 2295 APPLYs").
     */
    @Test
    void shouldGiveTheLoopUpWhenALiveBackupAnswersACommitsApplyWithAnErrorEveryTime() throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Catalog catalog = withBackup();
        final int[] applies = {0};
        final List<String> outcomes = new ArrayList<>();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        on(node, catalog, rt -> {
            final Promise<String> gaveUp = Promise.promise();
            rt.onGiveUp(gaveUp::tryComplete);
            final Txn txn = AurogonModule.AUROGON_PRE.begin(rt, false);
            final long ts = ((AurogonTxn) txn).timestamp();
            final Heartbeats heartbeats = Heartbeats.of(rt);
            heartbeats.decideAgainLimit = 4; // each try waits a period (64 by default: 16 leases)
            return txn.read("items", 9).compose(v -> {
                txn.write("items", 9, value, 0, 8);
                node.server.handle(AurogonRpc.APPLY, (request, responder) -> {
                    applies[0]++;
                    responder.fail(AurogonRpc.BAD_REQUEST, "injected: APPLY threw");
                });
                // The bound: four times the tries' periods (a loaded machine's timers run late), then no give-up.
                rt.timers().after(4 * heartbeats.decideAgainLimit * Heartbeats.PERIOD_NS + 1_000_000_000L)
                    .onSuccess(x -> gaveUp.tryFail("no give-up after " + applies[0] + " APPLYs"));
                return txn.commit();
            }).compose(committed -> {
                outcomes.add("committed");
                return gaveUp.future();
            }).compose(why -> {
                outcomes.add(why.contains("APPLY") ? "gave up" : why);
                outcomes.add("stuck " + heartbeats.stuck());
                service.register(node.server); // clean up: the backup applies what it holds
                return rt.rocket("mn").compose(rocket -> {
                    final UnsafeBuffer request = new UnsafeBuffer(new byte[AurogonRpc.HEADER_BYTES]);
                    request.putLong(AurogonRpc.TS_OFFSET, ts);
                    return rocket.call(AurogonRpc.APPLY, request);
                });
            }).map(reply -> outcomes.add("applied " + reply.payload().getInt(0)));
        });
        assertThat(outcomes).containsExactly("committed", "gave up", "stuck 1", "applied " + Backups.OK);
        assertThat(applies[0]).as("the first APPLY, then one a quarter lease apart (and any recovery's)")
            .isGreaterThan(4);
    }

    /**
     * Issue 20/23 review, finding 1: an attempt writes the copies its partitions named when it looked them up, so one
     * begun in an older memory-node configuration never writes a copy that rejoined since. Such an attempt aborts at
     * its replication (retried in the new configuration; its pending version rolled back), and one of the current
     * configuration is counted in {@code Catalog#decided} from its replication until its commit ends, so a rejoin's
     * drain ({@code Catalog#inFlightBefore}: the copier's check, each compute node's DRAINED) waits for it. Before,
     * the first one committed (its APPLY went to the old backups only) and the count stayed 0 throughout.
     */
    @Test
    void shouldAbortAnOlderConfigurationsAttemptAtReplicationAndCountTheCurrentOnesUntilTheCommitEnds()
        throws Exception {
        final OneMemoryNode node = shared;
        final ParticipantService service = node.services.service(ParticipantService.class);
        final Catalog.Partition backed = withBackup().table("items").partitions().get(0);
        // Its own epochs; two partitions (a configuration needs a node more than its backups), both this copy.
        final Catalog catalog = new Catalog().add("items", List.of(backed, backed));
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        final List<String> outcomes = new ArrayList<>();
        on(node, catalog, rt -> {
            final Txn older = AurogonModule.AUROGON_PRE.begin(rt, false);
            return older.read("items", 11).compose(v -> {
                older.write("items", 11, value, 0, 8);
                // A configuration applied meanwhile (the same copies here: a rejoin adds one): epoch 1.
                outcomes.add("reconfigured " + catalog.reconfigure(new io.scythe.txn.MemoryNodeConfiguration(1,
                    List.of(List.of(0, 1), List.of(0, 1)), java.util.Set.of())));
                return older.commit().transform(c -> {
                    outcomes.add(c.succeeded() ? "committed"
                        : c.cause() instanceof io.scythe.txn.AbortException a ? a.reason().label() : c.cause().toString());
                    outcomes.add("pending " + pending(service.participant(), 11));
                    outcomes.add("in flight " + catalog.inFlightBefore(2));
                    final Txn current = AurogonModule.AUROGON_PRE.begin(rt, false);
                    return current.read("items", 12).compose(x -> {
                        current.write("items", 12, value, 0, 8);
                        // Its REPLICATE sees it counted; fenced there, so the attempt aborts and changes nothing.
                        node.server.handle(AurogonRpc.REPLICATE, (request, responder) -> {
                            outcomes.add("in flight at REPLICATE " + catalog.inFlightBefore(2));
                            status(responder, Backups.FENCED);
                        });
                        return current.commit();
                    });
                });
            }).transform(c -> {
                service.register(node.server);
                outcomes.add(c.succeeded() ? "committed" : c.cause() instanceof io.scythe.txn.AbortException a
                    ? a.reason().label() : c.cause().toString());
                outcomes.add("in flight " + catalog.inFlightBefore(2));
                return Future.succeededFuture();
            });
        });
        assertThat(outcomes).containsExactly("reconfigured true", "reconfigured", "pending false", "in flight 0",
            "in flight at REPLICATE 1", "fenced", "in flight 0");
    }

    /** A period from now, then every period while {@code heartbeats} has a stuck timestamp, {@code periods} at most. */
    private static Future<Void> unstuck(final TxnRuntime rt, final Heartbeats heartbeats, final int periods) {
        return rt.timers().after(Heartbeats.PERIOD_NS).compose(v -> heartbeats.stuck() == 0 || periods <= 1
            ? Future.succeededFuture() : unstuck(rt, heartbeats, periods - 1));
    }

    /**
     * Timers on a clock of their own, {@code now[0]} (ns): each wait passes at once, moving the clock on by its delay,
     * which {@code waited} is told first.
     */
    private static io.scythe.txn.runtime.Timers steppedTimers(final long[] now,
                                                              final java.util.function.LongConsumer waited) {
        return new io.scythe.txn.runtime.Timers() {
            @Override
            public long nowNs() {
                return now[0];
            }

            @Override
            public Future<Void> after(final long delayNs) {
                waited.accept(delayNs);
                now[0] += delayNs;
                return Future.succeededFuture();
            }
        };
    }

    /**
     * A REPLICATE of one 8-byte part as it came in, read from the request at once (its buffer is the ring's, reused
     * once the handler returns), to be taken at a backup now or later ({@link #takenAt}).
     */
    private record Replicate(long ts, long low, long txn, long mask, int expected, int table, long key, byte[] part) {
        static Replicate of(final io.scythe.rrpc.RpcRequest request) {
            final org.agrona.DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            final byte[] part = new byte[8];
            p.getBytes(at + AurogonRpc.REPLICATE_HEADER_BYTES, part);
            return new Replicate(p.getLong(at + AurogonRpc.TS_OFFSET), p.getLong(at + AurogonRpc.REPLICATE_LOW_OFFSET),
                p.getLong(at + AurogonRpc.REPLICATE_TXN_OFFSET), p.getLong(at + AurogonRpc.REPLICATE_MASK_OFFSET),
                p.getInt(at + AurogonRpc.REPLICATE_EXPECTED_OFFSET), p.getInt(at + AurogonRpc.TABLE_OFFSET),
                p.getLong(at + AurogonRpc.KEY_OFFSET), part);
        }

        /** Takes it at {@code service}'s backups, as the service would: the status it answers. */
        int takenAt(final ParticipantService service) {
            return service.backups().replicate(ts, low, txn, mask, expected, table, key, part.length, 0, part);
        }
    }

    private static void status(final RpcResponder responder, final int status) {
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.STATUS_REPLY_BYTES]);
        reply.putInt(0, status);
        responder.reply(reply, 0, reply.capacity());
    }

    /** Runs {@code body} on the node's loop with a fresh runtime over {@code catalog} and waits for its result. */
    private static <R> R on(final OneMemoryNode node, final Catalog catalog,
                            final Function<TxnRuntime, Future<R>> body) throws Exception {
        return node.onCatalog(catalog, body);
    }
}
