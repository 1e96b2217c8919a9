package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.recovery.CnRecovery;
import io.scythe.txn.recovery.RecoveryRpc;
import io.scythe.txn.scythe.ScytheTxn;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Compute nodes die in one JVM (fenced on every memory node, their coordinators never heard from again) while
 * holding Takeout tickets, while queued, and mid-commit (after the redo record, before the write-back); another node
 * recovers them. Then: money conserved, every acknowledged transfer in the data (its ledger row), none applied twice
 * or in part (every balance equals the initial one plus the ledger rows present), no lock or ticket left, and the
 * live nodes go on committing.
 */
class CnRecoveryTest {
    private static final int ACCOUNTS = 16;
    private static final long INITIAL = 1_000;
    private static final int ACCOUNTS_TABLE = 1;
    private static final int LEDGER_TABLE = 2;

    private Vertx vertx;
    private EmbeddedScythe scythe;
    private final Set<Long> acknowledged = new HashSet<>();
    private long nextLedgerKey = 1;
    /** Memory nodes and backups per partition of the next {@link #start}. */
    private int memoryNodes = 2;
    private int replicas;
    /** The compute nodes' bound on a call to a memory node (0: EmbeddedScythe's default). */
    private long memoryNodeTimeoutMs;

    private void start(final String protocol) throws Exception {
        start(protocol, new JsonObject());
    }

    private void start(final String protocol, final JsonObject costModel) throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        final JsonObject config = new JsonObject().put("memoryNodes", memoryNodes).put("replicas", replicas)
            .put("protocol", protocol).put("redoLogBytes", 64 << 10).put("costModel", costModel);
        if (memoryNodeTimeoutMs > 0) {
            config.put("memoryNodeTimeoutMs", memoryNodeTimeoutMs);
        }
        scythe = EmbeddedScythe.deploy(vertx, config, (db, part, parts) -> {
                final Table accounts = db.create(TableSchema.fixed(ACCOUNTS_TABLE, "accounts", 8, 64));
                db.create(TableSchema.fixed(LEDGER_TABLE, "ledger", 24, 1024));
                final UnsafeBuffer balance = new UnsafeBuffer(new byte[8]);
                balance.putLong(0, INITIAL);
                for (long k = part; k < ACCOUNTS; k += parts) {
                    accounts.insert(k, balance, 0, 8, ObjectLayout.LOADED_VERSION);
                }
            }, new Procedures());
    }

    @AfterEach
    void stop() throws Exception {
        if (scythe != null) {
            scythe.close();
        }
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    private Context loop() {
        return scythe.loops().get(0);
    }

    private <T> T on(final Supplier<Future<T>> body) throws Exception {
        final Promise<T> done = Promise.promise();
        loop().runOnContext(v -> body.get().onComplete(done));
        return done.future().await(20, TimeUnit.SECONDS);
    }

    /** A transfer that also inserts its ledger row: one transaction, so the row proves the transfer happened. */
    private static Future<Long> transfer(final Txn txn, final long from, final long to, final long amount,
                                         final long ledgerKey) {
        return Future.all(txn.read("accounts", from), txn.read("accounts", to)).map(both -> {
            final UnsafeBuffer a = both.resultAt(0);
            final UnsafeBuffer b = both.resultAt(1);
            final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
            v.putLong(0, a.getLong(0) - amount);
            txn.write("accounts", from, v, 0, 8);
            v.putLong(0, b.getLong(0) + amount);
            txn.write("accounts", to, v, 0, 8);
            final UnsafeBuffer row = new UnsafeBuffer(new byte[24]);
            row.putLong(0, from);
            row.putLong(8, to);
            row.putLong(16, amount);
            txn.insert("ledger", ledgerKey, row, 0, 24);
            return ledgerKey;
        });
    }

    /** Starts the cluster running {@code protocol} with compute node cnA; its coordinator on one loop. */
    private Coordinator startWithCnA(final String protocol) throws Exception {
        start(protocol);
        return scythe.addComputeNode("cnA", 1L << 32).on(loop());
    }

    /**
     * A fault hook failing its first {@code faults[0]} calls as a WRITE that failed {@code how}: "send queue full"
     * (refused, not posted) or "completed with TRANSPORT_RETRY_EXCEEDED" (posted; it may have landed).
     */
    private static Future<Void> failWrite(final int[] faults, final String how) {
        return faults[0]-- > 0 ? Future.failedFuture(new io.scythe.bridge.VerbException(io.scythe.fabric.Opcode.WRITE,
            how)) : Future.succeededFuture();
    }

    private static final String POSTED_AND_FAILED = "completed with TRANSPORT_RETRY_EXCEEDED";

    /** Runs a transfer on {@code coordinator}; an acknowledged commit is noted in the client's ledger. */
    private boolean transferOn(final Coordinator coordinator, final long from, final long to, final long amount)
        throws Exception {
        final long key = nextLedgerKey++;
        try {
            on(() -> coordinator.run(txn -> transfer(txn, from, to, amount, key)));
            acknowledged.add(key);
            return true;
        } catch (final Exception e) {
            return false;
        }
    }

    private Coordinator recoverer() throws Exception {
        return on(() -> Future.succeededFuture(scythe.coordinator()));
    }

    /** Each memory node's Takeout ticket ledger (the scythe module's). */
    private java.util.List<io.scythe.txn.scythe.TicketLedger> tickets() {
        return scythe.memoryNodeServices().stream()
            .map(n -> n.service(io.scythe.txn.scythe.TicketLedger.class)).toList();
    }

    private CnRecovery.Report recover(final String dead) throws Exception {
        final TxnRuntime runtime = recoverer().runtime();
        return on(() -> new CnRecovery(runtime).recover(dead));
    }

    /** Money conserved, acknowledged transfers present, none twice or in part, no lock or ticket held. */
    private void checkInvariants() {
        final long[] expected = new long[ACCOUNTS];
        java.util.Arrays.fill(expected, INITIAL);
        final Set<Long> present = new HashSet<>();
        long total = 0;
        for (final LogDb db : scythe.memoryNodes()) {
            final Table ledger = db.table("ledger");
            for (long k = 1; k < nextLedgerKey; k++) {
                final long p = ledger.lookup(k);
                if (p == 0) {
                    continue;
                }
                final int at = ledger.offsetOf(p);
                final org.agrona.concurrent.AtomicBuffer m = ledger.objectMemory();
                assertNoLock(m, at, "ledger " + k);
                if ((m.getShort(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
                    continue; // an abandoned insert
                }
                assertThat(present.add(k)).as("ledger row %d once", k).isTrue();
                final long from = m.getLong(at + ObjectLayout.VALUE_OFFSET);
                final long to = m.getLong(at + ObjectLayout.VALUE_OFFSET + 8);
                final long amount = m.getLong(at + ObjectLayout.VALUE_OFFSET + 16);
                expected[(int) from] -= amount;
                expected[(int) to] += amount;
            }
        }
        for (final LogDb db : scythe.memoryNodes()) {
            final Table accounts = db.table("accounts");
            for (long k = 0; k < ACCOUNTS; k++) {
                final long p = accounts.lookup(k);
                if (p == 0) {
                    continue;
                }
                final int at = accounts.offsetOf(p);
                final long balance = accounts.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET);
                assertThat(balance).as("account %d: initial plus its ledger rows", k).isEqualTo(expected[(int) k]);
                assertNoLock(accounts.objectMemory(), at, "account " + k);
                total += balance;
            }
        }
        assertThat(total).as("money conserved").isEqualTo(ACCOUNTS * INITIAL);
        assertThat(present).as("every acknowledged transfer is in the data").containsAll(acknowledged);
    }

    private static void assertNoLock(final org.agrona.concurrent.AtomicBuffer m, final int at, final String what) {
        assertThat(m.getLongVolatile(at + ObjectLayout.LOWER_OFFSET)).as(what + ": ticket left held or queued")
            .isEqualTo(m.getLongVolatile(at + ObjectLayout.UPPER_OFFSET));
        assertThat(m.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET)).as(what + ": CAS lock left held")
            .isZero();
    }

    private void liveNodesProgress(final Coordinator... coordinators) throws Exception {
        for (final Coordinator c : coordinators) {
            for (int i = 0; i < 4; i++) {
                assertThat(transferOn(c, i, (i + 5) % ACCOUNTS, 3)).as("a live node commits after recovery").isTrue();
            }
        }
    }

    @Test
    void shouldReleaseTicketsOfANodeKilledWhileHoldingThem() throws Exception {
        start("scythe");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        assertThat(transferOn(dead.on(loop()), 1, 2, 10)).isTrue();
        // TOCC reads hold the Takeout Lock of accounts 3 and 4 until the transaction ends, which it never does.
        final ScytheTxn holder = new ScytheTxn(dead.on(loop()).runtime(), true);
        on(() -> Future.all(holder.readForUpdate("accounts", 3), holder.readForUpdate("accounts", 4)));
        // The memory nodes know which transaction of cnA holds each ticket.
        final java.util.Map<Long, Integer> heldByTxn = new java.util.HashMap<>();
        for (final io.scythe.txn.scythe.TicketLedger s : tickets()) {
            on(() -> Future.succeededFuture(s.transactionsOf("cnA")))
                .forEach((txn, tickets) -> heldByTxn.merge(txn, tickets.size(), Integer::sum));
        }
        assertThat(heldByTxn).containsExactly(java.util.Map.entry(holder.id(), 2));
        scythe.fence("cnA");
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.released("tickets")).isEqualTo(2);
        for (final io.scythe.txn.scythe.TicketLedger s : tickets()) {
            assertThat(on(() -> Future.succeededFuture(s.heldBy("cnA")))).isZero();
        }
        liveNodesProgress(live.on(loop()), recoverer());
        assertThat(transferOn(live.on(loop()), 3, 4, 7)).isTrue();
        checkInvariants();
    }

    /**
     * A dead node's SHARED (reader) ticket, taken as {@code scythe}'s default takes one on main (review S7): cnA's TOCC
     * attempt reads account 6 optimistically while cnB's writer holds it and aborts ({@code locked}), which makes 6 hot
     * for reads on cnA's loop; cnA's next TOCC attempt reads it with a shared ticket queued behind the writer (a
     * WriteCheck-style read of an object it does not write). The writer commits, the reader holds its shared ticket
     * and dies. Recovery releases it through the ledger, and a live writer gets account 6. Failed before S7 (the
     * two-argument constructor meant exclusive tickets): the ledger had no shared ticket of cnA.
     */
    @Test
    void shouldReleaseTheSharedTicketOfANodeKilledWhileHoldingIt() throws Exception {
        start("scythe");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        final ScytheTxn holder = new ScytheTxn(live.on(loop()).runtime(), true);
        on(() -> holder.readForUpdate("accounts", 6));
        final ScytheTxn first = new ScytheTxn(dead.on(loop()).runtime(), true);
        final ScytheTxn reader = new ScytheTxn(dead.on(loop()).runtime(), true);
        final java.util.concurrent.atomic.AtomicReference<Future<?>> read =
            new java.util.concurrent.atomic.AtomicReference<>();
        final boolean firstFailed = on(() -> first.read("accounts", 6).transform(ar -> {
            read.set(reader.read("accounts", 6)); // at once, on the loop: well within the heat's window
            return first.abort().map(ar.failed());
        }));
        assertThat(firstFailed).as("an optimistic TOCC read of a held object aborts (and marks it hot for reads)")
            .isTrue();
        waitUntil(() -> lowerMinusUpper(6) == 2); // the writer's ticket and the reader's, queued behind it
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, INITIAL);
        on(() -> {
            holder.write("accounts", 6, v, 0, 8);
            return holder.commit();
        });
        waitUntil(() -> read.get() != null && read.get().succeeded());
        assertThat(lowerMinusUpper(6)).as("the dead reader holds its ticket").isEqualTo(1);
        int shared = 0;
        for (final io.scythe.txn.scythe.TicketLedger s : tickets()) {
            shared += on(() -> Future.succeededFuture(s.sharedHeldBy("cnA")));
        }
        assertThat(shared).as("cnA's ticket on account 6 is a shared one").isEqualTo(1);
        scythe.fence("cnA");
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.released("tickets")).isEqualTo(1);
        assertThat(lowerMinusUpper(6)).as("its shared ticket released").isZero();
        for (final io.scythe.txn.scythe.TicketLedger s : tickets()) {
            assertThat(on(() -> Future.succeededFuture(s.heldBy("cnA")))).isZero();
        }
        liveNodesProgress(live.on(loop()), recoverer());
        assertThat(transferOn(live.on(loop()), 6, 7, 9)).isTrue();
        checkInvariants();
    }

    @Test
    void shouldSkipTheTicketOfANodeKilledWhileQueued() throws Exception {
        start("scythe");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        final ScytheTxn holder = new ScytheTxn(live.on(loop()).runtime(), true);
        on(() -> holder.readForUpdate("accounts", 5));
        // The dead node queues behind the live holder: its read never completes.
        final ScytheTxn queued = new ScytheTxn(dead.on(loop()).runtime(), true);
        loop().runOnContext(v -> queued.readForUpdate("accounts", 5));
        waitUntil(() -> lowerMinusUpper(5) == 2);
        scythe.fence("cnA");
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.released("tickets")).isEqualTo(1);
        // The holder commits; its unlock reaches the cancelled ticket, which the memory node skips.
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, INITIAL);
        on(() -> {
            holder.write("accounts", 5, v, 0, 8);
            return holder.commit();
        });
        waitUntil(() -> lowerMinusUpper(5) == 0);
        liveNodesProgress(live.on(loop()), recoverer());
        assertThat(transferOn(live.on(loop()), 5, 6, 9)).isTrue();
        checkInvariants();
    }

    @Test
    void shouldRollForwardATransactionKilledAfterItsRedoRecord() throws Exception {
        killMidCommit("scythe");
    }

    @Test
    void shouldRollForwardACasLockedTransactionKilledAfterItsRedoRecord() throws Exception {
        killMidCommit("ford-occ");
    }

    /**
     * With 2 backups per partition (3 memory nodes) the record is on three log regions: recovery rolls one copy
     * forward (the 21 records counted once), onto the primaries and every backup, which end identical to them.
     */
    @Test
    void shouldRollForwardAReplicatedTransactionKilledAfterItsRedoRecordOntoEveryCopy() throws Exception {
        memoryNodes = 3;
        replicas = 2;
        killMidCommit("scythe");
    }

    @Test
    void shouldRollForwardAReplicatedCasLockedTransactionKilledAfterItsRedoRecordOntoEveryCopy() throws Exception {
        memoryNodes = 3;
        replicas = 2;
        killMidCommit("ford-occ");
    }

    private void killMidCommit(final String protocol) throws Exception {
        start(protocol);
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        for (int i = 0; i < 20; i++) {
            assertThat(transferOn(dead.on(loop()), 1 + i % 4, 2 + i % 4, 10)).isTrue();
        }
        final TxnRuntime runtime = dead.on(loop()).runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterAppend(() -> scythe.fence("cnA")); // dies once its record is durable
            return Future.succeededFuture();
        });
        final long inDoubt = nextLedgerKey;
        assertThat(transferOn(dead.on(loop()), 7, 8, 25)).as("the client never hears of it").isFalse();
        assertThat(balanceOf(7)).as("nothing written back before the crash").isEqualTo(INITIAL);
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.committedRecords()).as("20 finished transfers and the one in doubt").isEqualTo(21);
        assertThat(report.truncatedRecords()).as("the finished ones are below the in-doubt record's low water")
            .isEqualTo(20);
        assertThat(report.entriesApplied()).as("two accounts and the ledger row").isEqualTo(3);
        assertThat(balanceOf(7)).as("rolled forward").isEqualTo(INITIAL - 25);
        assertThat(balanceOf(8)).isEqualTo(INITIAL + 25);
        acknowledged.add(inDoubt); // decided by its record: it must be in the data
        // Recovering again changes nothing: each entry applies only while its lock is still held.
        final CnRecovery.Report again = recover("cnA");
        assertThat(again.entriesApplied()).isZero();
        liveNodesProgress(live.on(loop()), recoverer());
        checkInvariants();
        assertThat(io.scythe.storage.BackupTables.compare(scythe.memoryNodes(), replicas)).as("every backup")
            .isEmpty();
    }

    /**
     * RCC's and SELCC's commits pass their point of no return where their redo record's WRITE is posted (issue 23
     * review): counted in {@code Catalog#decided} and the epoch checked just before it, so an attempt whose
     * configuration changed since it began aborts there, before its record (retried in the new one, whose epoch its
     * record names); once its record is durable it counts as in flight (a node's drain waits for it) until its
     * write-back finished, and a configuration applied in the LOG -> WRITE_BACK window finishes the commit instead of
     * giving the loop up. Before: a changed epoch was logged under the attempt's epoch, a durable record did not count
     * (inFlightBefore 0), and RCC's one-sided write-back re-checked the epoch after the record and gave the loop up.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"rcc-nowait", "selcc-2pl"})
    void shouldCountAnRccOrSelccCommitFromJustBeforeItsRecordUntilItsWriteBack(final String protocol)
        throws Exception {
        start(protocol); // SELCC's compute nodes message each other: the cluster's own one, not an added one
        final Coordinator coordinator = recoverer();
        final Catalog catalog = coordinator.runtime().catalog();
        final long epoch0 = catalog.epoch();
        final List<Long> inFlight = new ArrayList<>();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(coordinator.runtime()).afterAppend(() -> {
                inFlight.add(catalog.inFlightBefore(Long.MAX_VALUE));
                // A configuration applied between the durable record and the write-back (no copy changes).
                assertThat(catalog.reconfigure(new io.scythe.txn.MemoryNodeConfiguration(catalog.epoch() + 1,
                    io.scythe.txn.MemoryNodeConfiguration.initial(memoryNodes, replicas).copies(),
                    java.util.Set.of()))).isTrue();
            });
            return Future.succeededFuture();
        });
        final int[] attempts = {0};
        on(() -> coordinator.run(txn -> {
            if (attempts[0]++ == 0) { // a configuration applied once the attempt began (no copy changes)
                assertThat(catalog.reconfigure(new io.scythe.txn.MemoryNodeConfiguration(epoch0 + 1,
                    io.scythe.txn.MemoryNodeConfiguration.initial(memoryNodes, replicas).copies(),
                    java.util.Set.of()))).isTrue();
            }
            return transfer(txn, 7, 8, 25, nextLedgerKey++);
        }));
        assertThat(attempts[0]).as("the first attempt aborted before its record, retried").isEqualTo(2);
        assertThat(inFlight).as("counted while its record is durable").containsExactly(1L);
        assertThat(catalog.inFlightBefore(Long.MAX_VALUE)).as("finished: drained").isZero();
        assertThat(catalog.epoch()).isEqualTo(epoch0 + 2);
        final List<Long> logged = new ArrayList<>();
        for (final LogDb db : scythe.memoryNodes()) {
            for (final io.scythe.fabric.MemoryRegion r : db.nic().regions()) {
                if (!r.name().startsWith(io.scythe.txn.recovery.RecoveryService.LOG_REGION_PREFIX)) {
                    continue;
                }
                // Slots freed after a write-back are not cleared: the record is there, complete, either way.
                for (int at = 0; at < r.length(); at += io.scythe.txn.recovery.RedoRecordDescriptor.SLOT_BYTES) {
                    if (io.scythe.txn.recovery.RedoRecordDescriptor.completeLength(r.buffer(), at,
                        (int) r.length() - at) > 0) {
                        logged.add(io.scythe.txn.recovery.RedoRecordDescriptor.epochOf(r.buffer(), at));
                    }
                }
            }
        }
        assertThat(logged).as("only the retry's record, naming the epoch it began in").containsExactly(epoch0 + 1);
        assertThat(balanceOf(7)).isEqualTo(INITIAL - 25);
        assertThat(balanceOf(8)).isEqualTo(INITIAL + 25);
    }

    /**
     * A redo record of another format (here the records written before the format version existed: first word 'SRDO',
     * sealed with it) is refused before anything is applied: the recovery fails naming the version, the in-doubt
     * transfer stays unapplied and its locks held, for an operator. Before: 'SRDO' was the magic, and any record
     * carrying it was read as this layout (an older layout's u32 count and lock kind misread).
     */
    @Test
    void shouldRefuseARedoRecordOfAnotherFormatBeforeApplyingAnything() throws Exception {
        start("scythe");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final TxnRuntime runtime = dead.on(loop()).runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterAppend(() -> scythe.fence("cnA"));
            return Future.succeededFuture();
        });
        assertThat(transferOn(dead.on(loop()), 7, 8, 25)).isFalse();
        final int oldMagic = 0x5352444f; // 'SRDO'
        int rewritten = 0;
        for (final LogDb db : scythe.memoryNodes()) {
            for (final io.scythe.fabric.MemoryRegion r : db.nic().regions()) {
                if (!r.name().startsWith(io.scythe.txn.recovery.RecoveryService.LOG_REGION_PREFIX + "cnA")) {
                    continue;
                }
                final org.agrona.concurrent.AtomicBuffer b = r.buffer();
                for (int at = 0; at < r.length(); at += io.scythe.txn.recovery.RedoRecordDescriptor.SLOT_BYTES) {
                    final int length = io.scythe.txn.recovery.RedoRecordDescriptor.completeLength(b, at,
                        (int) r.length() - at);
                    if (length < 0) {
                        continue;
                    }
                    b.putInt(at, oldMagic); // and the layout before a376c2d1: u32 count, u32 lock kind, no epoch
                    final int count = io.scythe.txn.recovery.RedoRecordDescriptor.countOf(b, at);
                    final int kind = io.scythe.txn.recovery.RedoRecordDescriptor.lockKindOf(b, at);
                    b.putInt(at + io.scythe.txn.recovery.RedoRecordDescriptor.COUNT_OFFSET, count);
                    b.putInt(at + io.scythe.txn.recovery.RedoRecordDescriptor.COUNT_OFFSET + 4, kind);
                    final byte[] body = new byte[length - 8];
                    b.getBytes(at, body);
                    final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                    crc.update(body);
                    b.putLong(at + length - 8, (long) oldMagic << 32 | crc.getValue());
                    rewritten++;
                }
            }
        }
        assertThat(rewritten).as("the in-doubt transfer's record").isEqualTo(1);
        assertThatThrownBy(() -> recover("cnA")).satisfies(e -> {
            Throwable t = e;
            while (t != null && !(t instanceof io.scythe.txn.recovery.RedoRecordDescriptor
                .UnreadableRedoRecordException)) {
                t = t.getCause();
            }
            assertThat(t).as("refused as unreadable: " + e).isNotNull();
            assertThat(t.getMessage()).contains("format version 79 (0x4f)").contains("reads only version 2")
                .contains("left owed for an operator");
        });
        assertThat(balanceOf(7)).as("nothing applied").isEqualTo(INITIAL);
        assertThat(balanceOf(8)).isEqualTo(INITIAL);
        assertThat(lowerMinusUpper(7)).as("its lock still held: not released either").isNotZero();
    }

    /**
     * Motor keeps its versions in a CVT beside the home (issue 19): recovery rolls a decided commit into the home and
     * into a CVT cell on every copy, before the primary's release. Account 7 has a CVT (a first transfer wrote it
     * whole: the loaded version and v1); cnA dies once the record of 7 -> 8 (v2) is durable; recovery rolls it
     * forward. A read-only transaction starting after it (T_start above v2) reads 7 only after a live transfer wrote
     * v3: the home is too new, so it reads the CVT, whose newest cell below T_start must be v2 (recovery's), not v1.
     * Before: recovery wrote the home only, v3 overwrote the loaded version's cell, and the reader took v1's. v3's
     * own write-back is refused once and finished from its record, which must write its cell on every copy too.
     */
    @Test
    void shouldRollAMotorCommitIntoItsCvtSoALaterReadOnlyReaderFindsIt() throws Exception {
        memoryNodes = 3;
        replicas = 2;
        start("motor");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        assertThat(transferOn(dead.on(loop()), 7, 8, 10)).isTrue(); // v1 of 7: its CVT written whole
        final TxnRuntime runtime = dead.on(loop()).runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterAppend(() -> scythe.fence("cnA"));
            return Future.succeededFuture();
        });
        final long inDoubt = nextLedgerKey;
        assertThat(transferOn(dead.on(loop()), 7, 8, 25)).as("the client never hears of it").isFalse();
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.entriesApplied()).as("two accounts and the ledger row").isEqualTo(3);
        acknowledged.add(inDoubt);
        assertThat(balanceOf(7)).as("rolled forward into the home").isEqualTo(INITIAL - 35);
        final Coordinator coordinator = live.on(loop());
        final Txn reader = coordinator.protocol().begin(coordinator.runtime(), false);
        reader.declareReadOnly();
        assertThat(on(() -> reader.read("accounts", 1)).getLong(0)).isEqualTo(INITIAL); // T_start: after v2
        // v3's write-back to mn1 is refused once: the live commit is finished from what it holds (RedoStep), through
        // the same roll-forward, which must write v3's cell too (before: the home only).
        final int[] faults = {1};
        on(() -> {
            coordinator.runtime().beforeWriteBack(mn -> mn.equals("mn1") ? failWrite(faults, "send queue full")
                : Future.succeededFuture());
            return Future.succeededFuture();
        });
        assertThat(transferOn(coordinator, 7, 9, 5)).as("v3 of 7, after the reader's T_start").isTrue();
        assertThat(faults[0]).as("the fault fired").isZero();
        assertThat(balanceOf(7)).isEqualTo(INITIAL - 40);
        for (final LogDb db : scythe.memoryNodes()) {
            for (final Table t : db.tables()) {
                final long p = t.schema().name().startsWith("accounts") ? t.lookup(7) : 0;
                if (p != 0) {
                    assertThat(io.scythe.txn.lotus.Cvt.committedValue(t, t.offsetOf(p), 7).getLong(0))
                        .as("v3 in the CVT of 7 on %s (%s)", db.nic().node(), t.schema().name())
                        .isEqualTo(INITIAL - 40);
                }
            }
        }
        assertThat(on(() -> reader.read("accounts", 7)).getLong(0)).as("v2, from the CVT")
            .isEqualTo(INITIAL - 35);
        on(reader::commit);
        assertThat(recover("cnA").entriesApplied()).as("exactly once").isZero();
        checkInvariants();
        assertThat(io.scythe.storage.BackupTables.compare(scythe.memoryNodes(), replicas)).as("every backup")
            .isEmpty();
    }

    /**
     * A re-insert of a deleted key revives its object, whose Takeout Lock counters moved on: the inserter holds
     * ticket K > 0, not 0. Its redo record must name K, or recovery takes the entry for finished and then abandons
     * the insert of a committed transaction.
     */
    @Test
    void shouldRollForwardARevivedInsertKilledAfterItsRedoRecord() throws Exception {
        final Coordinator coordinator = startWithCnA("scythe");
        final long key = nextLedgerKey++;
        on(() -> coordinator.run(txn -> transfer(txn, 1, 2, 10, key)));
        // Undone: the money back and the ledger row deleted (its object stays, a delete, with its counters moved).
        on(() -> coordinator.run(txn -> Future.all(txn.read("accounts", 1), txn.read("accounts", 2),
            txn.read("ledger", key)).map(all -> {
                final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
                v.putLong(0, ((UnsafeBuffer) all.resultAt(0)).getLong(0) + 10);
                txn.write("accounts", 1, v, 0, 8);
                v.putLong(0, ((UnsafeBuffer) all.resultAt(1)).getLong(0) - 10);
                txn.write("accounts", 2, v, 0, 8);
                txn.delete("ledger", key);
                return null;
            })));
        assertThat(ticketOf("ledger", key)).as("the deleted object's counters moved on").isPositive();
        final TxnRuntime runtime = coordinator.runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterAppend(() -> scythe.fence("cnA")); // dies once its record is durable
            return Future.succeededFuture();
        });
        // The same transfer again re-inserts the deleted row: its object is revived and its ticket is not 0.
        assertThatThrownBy(() -> on(() -> coordinator.run(txn -> transfer(txn, 1, 2, 10, key))))
            .as("the client never hears of it");
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.entriesApplied()).as("two accounts and the revived ledger row").isEqualTo(3);
        assertThat(report.insertsAbandoned()).as("a committed insert is never abandoned").isZero();
        assertThat(balanceOf(1)).as("rolled forward").isEqualTo(INITIAL - 10);
        assertThat(balanceOf(2)).isEqualTo(INITIAL + 10);
        acknowledged.add(key); // decided by its record: the row is there once, and no ticket is left held
        checkInvariants();
    }

    /**
     * A write-back batch refused after the redo record on a live node (the refusal outlasting its re-posts): the
     * commit is past its point of no return, so it is finished from what it holds, not aborted and retried.
     */
    @Test
    void shouldFinishALiveCommitWhoseWriteBackFailedOnce() throws Exception {
        finishAfterWriteBackFailure("scythe");
    }

    @Test
    void shouldFinishALiveCasLockedCommitWhoseWriteBackFailedOnce() throws Exception {
        finishAfterWriteBackFailure("ford-occ");
    }

    private void finishAfterWriteBackFailure(final String protocol) throws Exception {
        final Coordinator coordinator = startWithCnA(protocol);
        final TxnRuntime runtime = coordinator.runtime();
        final int[] faults = {1};
        on(() -> {
            // account 7 is on mn1, 8 on mn0
            runtime.beforeWriteBack(mn -> mn.equals("mn1") ? failWrite(faults, "send queue full")
                : Future.succeededFuture());
            return Future.succeededFuture();
        });
        assertThat(transferOn(coordinator, 7, 8, 25)).as("the client sees it committed").isTrue();
        assertThat(faults[0]).as("the fault fired").isZero();
        assertThat(balanceOf(7)).as("applied once").isEqualTo(INITIAL - 25);
        assertThat(balanceOf(8)).isEqualTo(INITIAL + 25);
        assertThat(scythe.gaveUp()).as("finished: nothing given up").isEmpty();
        assertThat(on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).unfinishedRecords()))).as("its record released")
            .isZero();
        checkInvariants(); // the ledger row once, no ticket or CAS word held
        liveNodesProgress(coordinator);
        checkInvariants();
    }

    /**
     * The node dies between its write-back batches: the one to mn0 landed, the one to mn1 never did. Its batch to
     * mn1 fails (fenced), so it gives up with "outcome unknown", and recovery finishes the rest.
     */
    @Test
    void shouldRollForwardTheRestOfAPartialWriteBack() throws Exception {
        final Coordinator coordinator = startWithCnA("scythe");
        final TxnRuntime runtime = coordinator.runtime();
        on(() -> {
            // mn1's batch waits until mn0's has landed, then the node is fenced before it posts.
            runtime.beforeWriteBack(mn -> mn.equals("mn0") ? Future.succeededFuture()
                : runtime.timers().after(TimeUnit.MILLISECONDS.toNanos(50)).compose(v -> {
                    scythe.fence("cnA");
                    return Future.succeededFuture();
                }));
            return Future.succeededFuture();
        });
        final long inDoubt = nextLedgerKey++;
        assertThatThrownBy(() -> on(() -> coordinator.run(txn -> transfer(txn, 7, 8, 25, inDoubt))))
            .as("neither committed nor aborted to the client").hasMessageContaining("outcome unknown");
        assertThat(scythe.gaveUp()).containsExactly("cnA");
        assertThat(balanceOf(8)).as("mn0's batch landed").isEqualTo(INITIAL + 25);
        assertThat(balanceOf(7)).as("mn1's did not").isEqualTo(INITIAL);
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.entriesApplied()).as("what mn1 missed").isPositive();
        assertThat(report.entriesAlreadyDone()).as("what mn0 had").isPositive();
        assertThat(report.entriesApplied() + report.entriesAlreadyDone()).isEqualTo(3);
        assertThat(balanceOf(7)).as("rolled forward").isEqualTo(INITIAL - 25);
        acknowledged.add(inDoubt); // decided by its record
        liveNodesProgress(recoverer());
        checkInvariants();
    }

    /**
     * A write-back batch that failed after it was posted (a verb error, not a refusal) on a live, unfenced node: its
     * verbs might still land, so the node does not re-release on its own (a late release would count twice); it
     * gives up at once, keeps the locks it holds, and recovery finishes the commit after fencing it.
     */
    @Test
    void shouldGiveUpRatherThanReleaseAgainAfterAPostedBatchFailed() throws Exception {
        final Coordinator coordinator = startWithCnA("scythe");
        final TxnRuntime runtime = coordinator.runtime();
        final int[] faults = {1};
        on(() -> {
            // account 7 is on mn1, 8 on mn0
            runtime.beforeWriteBack(mn -> mn.equals("mn1") ? failWrite(faults, POSTED_AND_FAILED)
                : Future.succeededFuture());
            return Future.succeededFuture();
        });
        final long ticket7 = ticketOf("accounts", 7);
        final long inDoubt = transferGivenUp(coordinator, faults);
        assertThat(balanceOf(7)).as("mn1's batch never ran").isEqualTo(INITIAL);
        assertThat(ticketOf("accounts", 7)).as("it took the ticket").isEqualTo(ticket7 + 1);
        assertThat(upperOf("accounts", 7)).as("and still holds it: not released").isEqualTo(ticket7);
        assertThat(on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).unfinishedRecords()))).as("its record kept")
            .isEqualTo(1);
        assertThat(rollForwardGivenUp(inDoubt).entriesApplied()).as("what mn1 missed").isPositive();
    }

    /**
     * The record's WRITE landed but reported a failure (a lost acknowledgement): the node cannot tell whether its
     * commit is decided, so it must neither abort (recovery would roll the record forward: an "aborted" transfer in
     * the data) nor write the record again; it gives up, and recovery rolls the record forward.
     */
    @Test
    void shouldGiveUpRatherThanAbortWhenItsRecordWriteFailedAfterLanding() throws Exception {
        final Coordinator coordinator = startWithCnA("scythe");
        final TxnRuntime runtime = coordinator.runtime();
        assertThat(transferOn(coordinator, 1, 2, 10)).isTrue();
        final int[] faults = {1};
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterWrite(mn -> failWrite(faults, POSTED_AND_FAILED));
            return Future.succeededFuture();
        });
        final long records = on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).records()));
        final long inDoubt = transferGivenUp(coordinator, faults);
        assertThat(on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).records()))).as("not written again")
            .isEqualTo(records);
        assertThat(balanceOf(7)).as("no write-back").isEqualTo(INITIAL);
        assertThat(on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).unfinishedRecords()))).as("its record kept")
            .isEqualTo(1);
        assertThat(rollForwardGivenUp(inDoubt).entriesApplied()).as("two accounts and the ledger row").isEqualTo(3);
    }

    /** Runs on cnA the transfer 7 -> 8 of 25 that a fault (armed in {@code faults}) makes it give up; its key. */
    private long transferGivenUp(final Coordinator coordinator, final int[] faults) {
        final long inDoubt = nextLedgerKey++;
        assertThatThrownBy(() -> on(() -> coordinator.run(txn -> transfer(txn, 7, 8, 25, inDoubt))))
            .as("neither committed nor aborted to the client").hasMessageContaining("outcome unknown");
        assertThat(faults[0]).as("the fault fired").isZero();
        assertThat(scythe.gaveUp()).as("given up, not finished by itself").containsExactly("cnA");
        return inDoubt;
    }

    /** Recovers cnA: its given-up transfer 7 -> 8 of 25 is rolled forward, and the live nodes go on. */
    private CnRecovery.Report rollForwardGivenUp(final long inDoubt) throws Exception {
        final CnRecovery.Report report = recover("cnA");
        assertThat(balanceOf(7)).as("rolled forward").isEqualTo(INITIAL - 25);
        assertThat(balanceOf(8)).isEqualTo(INITIAL + 25);
        acknowledged.add(inDoubt); // decided by its record
        liveNodesProgress(recoverer());
        checkInvariants();
        return report;
    }

    /** The ticket now holding {@code key}'s Takeout Lock ({@code upper}). */
    private long upperOf(final String table, final long key) {
        for (final LogDb db : scythe.memoryNodes()) {
            final Table t = db.table(table);
            final long p = t.lookup(key);
            if (p != 0) {
                return t.objectMemory().getLongVolatile(t.offsetOf(p) + ObjectLayout.UPPER_OFFSET);
            }
        }
        throw new AssertionError("no key " + key + " in " + table);
    }

    /** The ticket the next holder of {@code key}'s Takeout Lock gets ({@code lower}). */
    private long ticketOf(final String table, final long key) {
        for (final LogDb db : scythe.memoryNodes()) {
            final Table t = db.table(table);
            final long p = t.lookup(key);
            if (p != 0) {
                return t.objectMemory().getLongVolatile(t.offsetOf(p) + ObjectLayout.LOWER_OFFSET);
            }
        }
        throw new AssertionError("no key " + key + " in " + table);
    }

    @Test
    void shouldFreeCasWordsAndAbandonInsertsOfADeadNode() throws Exception {
        start("ford-occ");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        assertThat(transferOn(dead.on(loop()), 1, 2, 10)).isTrue();
        // As if it crashed after its commit-time CASes and INSERT, before its record: locks held, nothing logged.
        final long owner = (1L << 32) | (1L << 40) | 99;
        final Table accounts = scythe.memoryNodes().get(1).table("accounts");
        final int at = accounts.offsetOf(accounts.lookup(9));
        accounts.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, owner);
        final TxnRuntime runtime = dead.on(loop()).runtime();
        final long orphan = nextLedgerKey++;
        final UnsafeBuffer row = new UnsafeBuffer(new byte[24]);
        row.putLong(16, 1_000_000); // would break every balance if it survived
        on(() -> runtime.remote(runtime.catalog().table("ledger").partitionOf(orphan)).insert(orphan, row, 0, 24,
            Table.InsertLock.CAS_WORD, owner));
        scythe.fence("cnA");
        final CnRecovery.Report report = recover("cnA");
        assertThat(report.released("casWords")).isEqualTo(1);
        assertThat(report.insertsAbandoned()).isEqualTo(1);
        assertThat(report.committedRecords()).as("records of finished transactions are harmless").isGreaterThanOrEqualTo(0);
        assertThat(report.entriesApplied()).isZero();
        liveNodesProgress(recoverer());
        checkInvariants();
    }

    /**
     * Two live nodes recover the same dead one at once (ownership moved mid-recovery): the memory nodes admit one
     * recoverer, so the in-doubt record is rolled forward once and {@code upper} passes the dead node's ticket once,
     * reaching the live ticket queued behind it and no further.
     */
    @Test
    void shouldAdmitOneRecovererAtATimeSoTicketsEndExact() throws Exception {
        // A slow fabric: without the memory nodes' admission both would read a header before either's write lands.
        start("scythe", new JsonObject().put("oneWayLatencyNs", 2_000_000));
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode first = scythe.addComputeNode("cnB", 2L << 32);
        final EmbeddedScythe.ComputeNode second = scythe.addComputeNode("cnC", 3L << 32);
        final TxnRuntime runtime = dead.on(loop()).runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(runtime).afterAppend(() -> scythe.fence("cnA")); // dies once its record is durable
            return Future.succeededFuture();
        });
        final long inDoubt = nextLedgerKey;
        assertThat(transferOn(dead.on(loop()), 7, 8, 25)).isFalse();
        acknowledged.add(inDoubt); // decided by its record
        // A live TOCC read queues behind the dead node's ticket on account 7.
        final ScytheTxn queued = new ScytheTxn(first.on(loop()).runtime(), true);
        final Promise<UnsafeBuffer> queuedRead = Promise.promise();
        loop().runOnContext(v -> queued.readForUpdate("accounts", 7).onComplete(queuedRead));
        waitUntil(() -> lowerMinusUpper(7) == 2);
        final TxnRuntime one = first.on(loop()).runtime();
        final TxnRuntime other = second.on(loop()).runtime();
        final List<Future<CnRecovery.Report>> both = new ArrayList<>();
        on(() -> {
            both.add(new CnRecovery(one).recover("cnA", 1, new long[0]));
            both.add(new CnRecovery(other).recover("cnA", 2, new long[0]));
            return Future.join(both).otherwiseEmpty();
        });
        assertThat(both).as("one recoverer admitted").filteredOn(Future::succeeded).hasSize(1);
        final Future<CnRecovery.Report> refused = both.stream().filter(Future::failed).findFirst().orElseThrow();
        assertThat(refused.cause()).hasMessageContaining("is being recovered by");
        assertThat(both.stream().filter(Future::succeeded).findFirst().orElseThrow().result().entriesApplied())
            .as("two accounts and the ledger row, once").isEqualTo(3);
        // upper moved past the dead node's ticket once: the live read holds the lock, nobody is skipped.
        assertThat(queuedRead.future().await(10, TimeUnit.SECONDS).getLong(0)).isEqualTo(INITIAL - 25);
        assertThat(lowerMinusUpper(7)).as("only the live reader's ticket is outstanding").isEqualTo(1);
        final UnsafeBuffer same = new UnsafeBuffer(new byte[8]);
        same.putLong(0, INITIAL - 25);
        on(() -> {
            queued.write("accounts", 7, same, 0, 8);
            return queued.commit();
        });
        waitUntil(() -> lowerMinusUpper(7) == 0);
        // The refused one, run again once the first is done, finds nothing left and changes nothing.
        assertThat(on(() -> new CnRecovery(other).recover("cnA", 2, new long[0])).entriesApplied()).isZero();
        liveNodesProgress(first.on(loop()), second.on(loop()));
        checkInvariants();
    }

    /**
     * A recoverer that dies mid-way is replaced only once it is fenced, and never by a smaller claim; an equal one is
     * admitted (the owed map can lose the dead claimant's entry with its member: CI 207).
     */
    @Test
    void shouldLetAClaimNoSmallerTakeOverFromAFencedRecovererOnly() throws Exception {
        start("scythe");
        final EmbeddedScythe.ComputeNode dead = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode first = scythe.addComputeNode("cnB", 2L << 32);
        final EmbeddedScythe.ComputeNode second = scythe.addComputeNode("cnC", 3L << 32);
        final ScytheTxn holder = new ScytheTxn(dead.on(loop()).runtime(), true);
        on(() -> Future.all(holder.readForUpdate("accounts", 3), holder.readForUpdate("accounts", 4)));
        scythe.fence("cnA");
        // cnB starts recovering cnA (it lists the logs on every memory node) and is never heard of again.
        final TxnRuntime one = first.on(loop()).runtime();
        final byte[] name = "cnA".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final UnsafeBuffer list = new UnsafeBuffer(new byte[RecoveryRpc.LIST_REQUEST_HEADER_BYTES + name.length]);
        list.putLong(0, 1);
        list.putBytes(RecoveryRpc.LIST_REQUEST_HEADER_BYTES, name);
        for (final String mn : List.of("mn0", "mn1")) {
            on(() -> one.rocket(mn).compose(r -> r.call(RecoveryRpc.LOG_LIST, list)));
        }
        final TxnRuntime other = second.on(loop()).runtime();
        assertThatThrownBy(() -> on(() -> new CnRecovery(other).recover("cnA", 2, new long[0])))
            .as("cnB is alive (not fenced)").hasMessageContaining("is being recovered by cnB");
        scythe.fence("cnB"); // its member left: every memory node fenced it
        assertThatThrownBy(() -> on(() -> new CnRecovery(other).recover("cnA", 0, new long[0])))
            .as("an older claim").hasMessageContaining("is being recovered by cnB");
        final CnRecovery.Report report = on(() -> new CnRecovery(other).recover("cnA", 1, new long[0]));
        assertThat(report.released("tickets")).isEqualTo(2);
        liveNodesProgress(second.on(loop()));
        checkInvariants();
    }

    /**
     * MN failover with commits in flight (FaRM's recovery of a promoted region): 3 memory nodes, 1 backup each. cnA
     * dies once its record of 4 -> 5 is durable (nothing written back); cnC dies after the backups of 7 -> 8 landed,
     * before any primary. Then mn1 (the primary of 4 and 7) fails: configuration epoch 1 promotes its backup on mn2
     * and blocks that partition, so a new transaction there is refused ("settling") while the commits are settled.
     * Recovery rolls cnA's entries forward onto the promoted copy (its version below the record's) and finds cnC's
     * there already (versions decide: nothing written twice, the version unchanged); settling again applies nothing.
     * Then the partition serves: money conserved on the serving copies, both decided transfers in, no lock held.
     */
    @Test
    void shouldSettleDecidedCommitsOntoAPromotedCopyBeforeItServes() throws Exception {
        settleOntoPromotedCopy("scythe");
    }

    /** The same with CAS locks and FORD's versions (the largest version read + 1). */
    @Test
    void shouldSettleDecidedCasLockedCommitsOntoAPromotedCopyBeforeItServes() throws Exception {
        settleOntoPromotedCopy("ford-occ");
    }

    /**
     * The same with Motor (issue 19): the settling of a promoted copy writes the commit's version into its CVT too
     * ({@code MotorLockKind#settleCopy}), not only the home. 4, 5, 7 and 8 get CVTs first (a transfer there and back:
     * balances unchanged), so the CVT of 4 on the promoted copy holds older versions only when cnA's commit is settled
     * onto it; after the settling its newest cell must be cnA's (before: the home only, the newest cell the warm-up's),
     * and 7's, whose backup write-back landed with its cell, gets no second cell.
     */
    @Test
    void shouldSettleAMotorCommitIntoThePromotedCopysCvt() throws Exception {
        settleOntoPromotedCopy("motor", this::checkMotorCvtsSettled);
    }

    /** Once settled (before later transfers write them): the newest cells of 4, 5, 7 and 8 are their homes. */
    private void checkMotorCvtsSettled() throws Exception {
        final Catalog catalog = recoverer().runtime().catalog();
        for (final long account : new long[] {4, 5, 7, 8}) {
            final Table t = servingTable("accounts", account);
            final int at = t.offsetOf(t.lookup(account));
            assertThat(io.scythe.txn.lotus.Cvt.committedValue(t, at, account).getLong(0))
                .as("the newest cell of %d's CVT on its primary %s", account,
                    catalog.table("accounts").partitionOf(account).node())
                .isEqualTo(servingBalance(account));
        }
        final Table t7 = servingTable("accounts", 7);
        final int at7 = t7.offsetOf(t7.lookup(7));
        final int cvt = io.scythe.txn.motor.MotorCvt.at(t7.schema().maxValueBytes());
        final UnsafeBuffer image = new UnsafeBuffer(new byte[cvt + io.scythe.txn.lotus.Cvt.cvtBytes(2)]);
        t7.objectMemory().getBytes(at7, image, 0, image.capacity());
        assertThat(io.scythe.txn.lotus.Cvt.version(image, cvt, 0)).as("7's two cells: the warm-up's and cnC's")
            .isNotEqualTo(io.scythe.txn.lotus.Cvt.version(image, cvt, 1));
    }

    /** A check that may throw. */
    private interface Check {
        void run() throws Exception;
    }

    private void settleOntoPromotedCopy(final String protocol) throws Exception {
        settleOntoPromotedCopy(protocol, () -> { });
    }

    private void settleOntoPromotedCopy(final String protocol, final Check settled) throws Exception {
        memoryNodes = 3;
        replicas = 1;
        start(protocol);
        final EmbeddedScythe.ComputeNode cnA = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode cnC = scythe.addComputeNode("cnC", 3L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        for (final long[] t : new long[][] {{0, 9}, {1, 10}, {2, 11}, {3, 12}, {6, 13}, {14, 15}}) {
            assertThat(transferOn(live.on(loop()), t[0], t[1], 5)).isTrue(); // not 4, 5, 7, 8 (checked below)
        }
        if (protocol.equals("motor")) { // CVTs for 4, 5, 7 and 8, balances unchanged
            for (final long[] t : new long[][] {{4, 5}, {5, 4}, {7, 8}, {8, 7}}) {
                assertThat(transferOn(live.on(loop()), t[0], t[1], 1)).isTrue();
            }
        }
        final TxnRuntime a = cnA.on(loop()).runtime();
        final TxnRuntime c = cnC.on(loop()).runtime();
        // cnC's backup batches (one per backup node: of 7 on mn2, of 8 on mn0, of its ledger row) pass the gate,
        // then it dies at its first primary batch.
        final long ledgerC = nextLedgerKey + 1;
        final int backupNodes = new java.util.TreeSet<>(List.of("mn2", "mn0", "mn" + (ledgerC % 3 + 1) % 3)).size();
        final int[] gated = {0};
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(a).afterAppend(() -> scythe.fence("cnA"));
            c.beforeWriteBack(mn -> {
                if (++gated[0] > backupNodes) {
                    scythe.fence("cnC"); // the backups' write-back completed; no primary batch lands
                }
                return Future.succeededFuture();
            });
            return Future.succeededFuture();
        });
        final long decidedA = nextLedgerKey;
        assertThat(transferOn(cnA.on(loop()), 4, 5, 25)).as("cnA's client never hears of it").isFalse();
        final long decidedC = nextLedgerKey;
        assertThat(decidedC).isEqualTo(ledgerC);
        assertThat(transferOn(cnC.on(loop()), 7, 8, 30)).as("cnC's client never hears of it").isFalse();
        final io.scythe.txn.Catalog catalog = a.catalog();
        final long epoch0 = catalog.epoch();
        // mn1 fails: its primary copies stop serving, its backup on mn2 is promoted.
        final io.scythe.txn.MemoryNodeConfiguration next = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(next)).isTrue();
        assertThat(catalog.epoch()).isEqualTo(epoch0 + 1);
        assertThat(catalog.inFlightBefore(next.epoch())).as("both dead commits gave up: nothing left to drain")
            .isZero();
        final Catalog.Partition promoted = catalog.table("accounts").partitionOf(7);
        assertThat(promoted.node()).isEqualTo("mn2");
        assertThat(catalog.blocked(promoted)).isTrue();
        assertThat(catalog.blocked(catalog.table("accounts").partitionOf(6))).as("mn0's partition serves").isFalse();
        assertThat(servingBalance(4)).as("cnA's write-back never began").isEqualTo(INITIAL);
        assertThat(servingBalance(7)).as("cnC's backup write-back landed").isEqualTo(INITIAL - 30);
        final long version7 = servingVersion(7);
        assertThatThrownBy(() -> on(() -> live.on(loop()).run(txn -> txn.read("accounts", 1))))
            .as("the promoted partition is blocked until the commits in flight are settled")
            .hasMessageContaining("blocked until the commits in flight");
        final CnRecovery.Report ra = recover("cnA");
        assertThat(ra.entriesApplied()).as("4 onto the promoted copy, 5, the ledger row").isEqualTo(3);
        final CnRecovery.Report rc = recover("cnC");
        assertThat(rc.entriesApplied() + rc.entriesAlreadyDone()).isEqualTo(3);
        assertThat(rc.entriesAlreadyDone()).as("7 had landed on the promoted copy").isPositive();
        assertThat(servingVersion(7)).as("versions decide: 7 not written again").isEqualTo(version7);
        assertThat(servingBalance(4)).as("rolled forward onto the promoted copy").isEqualTo(INITIAL - 25);
        assertThat(servingBalance(5)).isEqualTo(INITIAL + 25);
        assertThat(servingBalance(7)).isEqualTo(INITIAL - 30);
        assertThat(servingBalance(8)).isEqualTo(INITIAL + 30);
        assertThat(recover("cnA").entriesApplied() + recover("cnC").entriesApplied()).as("settled exactly once")
            .isZero();
        settled.run();
        acknowledged.add(decidedA); // decided by their records: they must be in the data
        acknowledged.add(decidedC);
        assertThat(catalog.settled(next.epoch())).isTrue();
        assertThat(catalog.blocked(promoted)).isFalse();
        for (int i = 0; i < 6; i++) {
            assertThat(transferOn(live.on(loop()), 1 + i, 13 - i, 3)).as("the promoted copy serves").isTrue();
        }
        checkServingCopies(catalog);
    }

    /**
     * Commits after an MN failover, then CN deaths (issue 23 §2): 3 memory nodes, 1 backup each. mn1 fails over
     * (epoch 1: its backup of p1 on mn2 promoted, p0 without its backup) and the commits in flight are settled. Then
     * cnA and cnC each commit a transfer under epoch 1 and die once its redo record is durable, before any
     * write-back: cnA moves 4 (p1, served by the promoted copy) to 5 (p2, primary and backup as loaded) with its
     * ledger row on p0 (its backup gone); cnC moves 7 (p1) to 9 (p0) with its row on p1 (an insert on the promoted
     * copy). Their records name each partition as it was loaded, so recovery finds p1 by mn1's name though mn2
     * serves it (a record naming it as served, "mn2 with no backup", is read as p2's and refused). It rolls both
     * forward exactly once onto the serving copies, releasing the locks the dead nodes took on the promoted copy;
     * money conserved, both transfers in, no lock left, and transfers go on.
     */
    @Test
    void shouldRollForwardCommitsMadeAfterAFailoverOntoTheServingCopies() throws Exception {
        rollForwardAfterFailover("scythe");
    }

    /** The same with CAS locks (FORD). */
    @Test
    void shouldRollForwardCasLockedCommitsMadeAfterAFailoverOntoTheServingCopies() throws Exception {
        rollForwardAfterFailover("ford-occ");
    }

    private void rollForwardAfterFailover(final String protocol) throws Exception {
        memoryNodes = 3;
        replicas = 1;
        start(protocol);
        final EmbeddedScythe.ComputeNode cnA = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode cnC = scythe.addComputeNode("cnC", 3L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        final Catalog catalog = live.on(loop()).runtime().catalog();
        final io.scythe.txn.MemoryNodeConfiguration without1 = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.settled(without1.epoch())).as("nothing was in flight").isTrue();
        assertThat(catalog.table("accounts").partitionOf(4).node()).as("p1 served by its promoted copy")
            .isEqualTo("mn2");
        for (final long[] t : new long[][] {{0, 3}, {1, 2}, {6, 10}, {12, 13}}) { // not 4, 5, 7, 9 (checked below)
            assertThat(transferOn(live.on(loop()), t[0], t[1], 5)).as("served without mn1").isTrue();
        }
        final long[] before = {servingBalance(4), servingBalance(5), servingBalance(7), servingBalance(9)};
        final TxnRuntime a = cnA.on(loop()).runtime();
        final TxnRuntime c = cnC.on(loop()).runtime();
        on(() -> {
            io.scythe.txn.recovery.RedoLog.of(a).afterAppend(() -> scythe.fence("cnA"));
            io.scythe.txn.recovery.RedoLog.of(c).afterAppend(() -> scythe.fence("cnC"));
            return Future.succeededFuture();
        });
        nextLedgerKey += Math.floorMod(-nextLedgerKey, 3); // cnA's row on p0, cnC's on p1
        final long decidedA = nextLedgerKey;
        assertThat(transferOn(cnA.on(loop()), 4, 5, 25)).as("cnA's client never hears of it").isFalse();
        final long decidedC = nextLedgerKey;
        assertThat(decidedC % 3).isEqualTo(1);
        assertThat(transferOn(cnC.on(loop()), 7, 9, 30)).as("cnC's client never hears of it").isFalse();
        assertThat(new long[] {servingBalance(4), servingBalance(5), servingBalance(7), servingBalance(9)})
            .as("nothing written back before the crashes").containsExactly(before);
        final Table promoted = servingTable("accounts", 4);
        assertThat(promoted.objectMemory().getLongVolatile(promoted.offsetOf(promoted.lookup(4))
            + ObjectLayout.CAS_LOCK_OFFSET) != 0 || lowerMinusUpperOn(promoted, 4) > 0)
            .as("cnA holds its lock on the promoted copy").isTrue();

        final CnRecovery.Report ra = recover("cnA");
        assertThat(ra.entriesApplied()).as("4 on the promoted copy, 5 on p2's copies, the row on p0").isEqualTo(3);
        final CnRecovery.Report rc = recover("cnC");
        assertThat(rc.entriesApplied()).as("7 and the row on the promoted copy, 9 on p0").isEqualTo(3);
        acknowledged.add(decidedA); // decided by their records: they must be in the data
        acknowledged.add(decidedC);
        assertThat(new long[] {servingBalance(4), servingBalance(5), servingBalance(7), servingBalance(9)})
            .as("each rolled forward once").containsExactly(before[0] - 25, before[1] + 25, before[2] - 30,
                before[3] + 30);
        for (int i = 0; i < 6; i++) {
            assertThat(transferOn(live.on(loop()), 4 + i % 2 * 3, 9 - i % 2 * 4, 2)).as("4, 5, 7, 9 are free again")
                .isTrue();
        }
        checkServingCopies(catalog);
    }

    /**
     * A record written before a failover, replayed after it (the review of stop 33): cnA commits a transfer of account
     * 4 (p1, on mn1) in full, and its record stays in its log (nothing of its loop wrote a later one). mn1 fails over
     * (p1 promoted on mn2, whose Takeout counters start from 0), and a live transaction on cnB takes the promoted
     * copy's lock of 4 with the very ticket cnA's record names, and holds it (its write-back paused). cnA dies and is
     * recovered while cnB holds the lock: the record names mn1 as the primary it was written under, so its lock word on
     * the promoted copy is not read as the record's (that would install the old write over the live holder's lock and
     * release it): versions say it landed, nothing is applied. cnB then commits, and the copies agree.
     */
    @Test
    void shouldNotTakeALiveHoldersTicketOnAPromotedCopyForAnOldRecordsLock() throws Exception {
        memoryNodes = 3;
        replicas = 1;
        start("scythe");
        final EmbeddedScythe.ComputeNode cnA = scythe.addComputeNode("cnA", 1L << 32);
        final EmbeddedScythe.ComputeNode live = scythe.addComputeNode("cnB", 2L << 32);
        assertThat(transferOn(cnA.on(loop()), 4, 5, 25)).as("cnA's transfer commits in full").isTrue();
        final Table loadedP1 = servingTable("accounts", 4);
        final long ticketOfA = loadedP1.objectMemory().getLongVolatile(loadedP1.offsetOf(loadedP1.lookup(4))
            + ObjectLayout.UPPER_OFFSET) - 1; // released: upper passed it
        final Catalog catalog = live.on(loop()).runtime().catalog();
        final io.scythe.txn.MemoryNodeConfiguration without1 = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.settled(without1.epoch())).as("nothing was in flight").isTrue();
        for (long i = 0; i < ticketOfA; i++) { // the promoted copy's tickets of 4 up to cnA's
            assertThat(transferOn(live.on(loop()), 4, 6, 1)).isTrue();
        }
        final Promise<Void> paused = Promise.promise();
        final TxnRuntime b = live.on(loop()).runtime();
        final long ledgerOfB = nextLedgerKey++;
        final Promise<Void> committedB = Promise.promise();
        loop().runOnContext(v -> {
            b.beforeWriteBack(mn -> paused.future());
            live.on(loop()).run(txn -> transfer(txn, 4, 6, 7, ledgerOfB)).<Void>mapEmpty().onComplete(committedB);
        });
        final Table promoted = servingTable("accounts", 4);
        final int at = promoted.offsetOf(promoted.lookup(4));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lowerMinusUpperOn(promoted, 4) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(promoted.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET))
            .as("cnB holds the promoted copy's lock of 4 with cnA's old ticket").isEqualTo(ticketOfA);
        assertThat(lowerMinusUpperOn(promoted, 4)).isPositive();
        final long versionHeld = servingVersion(4);
        final long balanceHeld = servingBalance(4);

        scythe.fence("cnA");
        final CnRecovery.Report ra = recover("cnA");
        assertThat(ra.entriesApplied()).as("cnA's transfer had landed: nothing applied again").isZero();
        assertThat(servingVersion(4)).as("nothing installed under cnB's lock").isEqualTo(versionHeld);
        assertThat(servingBalance(4)).isEqualTo(balanceHeld);
        assertThat(promoted.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET))
            .as("cnB's lock not released by the recovery").isEqualTo(ticketOfA);

        loop().runOnContext(v -> paused.complete());
        committedB.future().await(20, TimeUnit.SECONDS);
        acknowledged.add(ledgerOfB);
        on(() -> {
            b.beforeWriteBack(null);
            return Future.succeededFuture();
        });
        assertThat(servingBalance(4)).isEqualTo(balanceHeld - 7);
        checkServingCopies(catalog);
    }

    /**
     * A memory node dies under a transaction whose Lock RPC to it was sent (issue 23 §2; under {@code scythe chaos
     * --mn-faults} every CN with such a verb gave its lease up): mn1 stops answering, cnA's TOCC read of account 4
     * (p1, on mn1) times out in its Lock RPC, so its ticket is in doubt. The configuration removing mn1 comes while
     * the attempt waits for it ({@code TxnRuntime#failoverWaitNs}): the attempt aborts, retried in the new
     * configuration (the ticket died with mn1: the promoted copy on mn2 has no lock word), and cnA does not give up:
     * it commits transfers of account 4 on the promoted copy, and nothing is held on the serving copies.
     */
    @Test
    void shouldAbortRatherThanGiveUpWhenALockIsInDoubtOnAMemoryNodeTheConfigurationRemoves() throws Exception {
        memoryNodeTimeoutMs = 300;
        final EmbeddedScythe.ComputeNode cnA = cnAWaitingForFailovers();
        final TxnRuntime runtime = cnA.on(loop()).runtime();
        final Catalog catalog = runtime.catalog();
        scythe.pauseMemoryNode(1);
        final Promise<Object> outcome = Promise.promise();
        final ScytheTxn reader = new ScytheTxn(runtime, true);
        loop().runOnContext(v -> reader.readForUpdate("accounts", 4).onComplete(ar -> reader.abort()
            .onComplete(aborted -> outcome.complete(ar.succeeded() ? "read" : ar.cause()))));
        Thread.sleep(3 * memoryNodeTimeoutMs); // the Lock RPC timed out: the attempt waits for a configuration
        final io.scythe.txn.MemoryNodeConfiguration without1 = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.settled(without1.epoch())).isTrue();
        final Object read = outcome.future().await(20, TimeUnit.SECONDS);
        assertThat(read).as("aborted, retried in the new configuration").isInstanceOf(io.scythe.txn.AbortException.class);
        assertThat(((io.scythe.txn.AbortException) read).reason().label()).isEqualTo("reconfigured");
        assertThat(((Throwable) read).getMessage()).contains("Lock RPC").contains("mn1")
            .contains("the lock died with it");
        assertThat(scythe.gaveUp()).as("cnA keeps serving").isEmpty();
        for (int i = 0; i < 3; i++) {
            assertThat(transferOn(cnA.on(loop()), 4, 6 + i, 5)).as("account 4 on the promoted copy").isTrue();
        }
        checkServingCopies(catalog);
        scythe.resumeMemoryNode(1);
    }

    /**
     * A memory node dies under a commit whose redo record was being written (issue 23 §2; under {@code scythe chaos
     * --mn-faults} a CN gave its lease up for it): cnA's transfer 4 -> 5 writes its record to the log on mn1 (p1's
     * primary) and mn2 (its backup); the copy on mn1 fails after it was posted, so the commit is decided but in doubt.
     * The configuration removing mn1 comes while the attempt waits for it ({@code TxnRuntime#failoverWaitNs}): the
     * record is durable on every copy that serves, so cnA finishes the commit there itself (account 4 settled onto the
     * promoted copy on mn2 by versions, 5 and the ledger row as usual) and tells its client "committed"; it does not
     * give up, nothing stays held, and the failover settles once the commit finished.
     */
    @Test
    void shouldFinishACommitWhoseRecordCopyFailedOnAMemoryNodeTheConfigurationRemoves() throws Exception {
        finishedAfterMn1Fails((runtime, fault) -> io.scythe.txn.recovery.RedoLog.of(runtime).afterWrite(fault));
    }

    /** The same when the record is durable and a write-back batch to mn1 fails after it was posted. */
    @Test
    void shouldFinishACommitWhoseWriteBackFailedOnAMemoryNodeTheConfigurationRemoves() throws Exception {
        finishedAfterMn1Fails(TxnRuntime::beforeWriteBack);
    }

    /** Runs the transfer 4 -> 5 on cnA with {@code arm}'s fault point failing its first verb to mn1; see above. */
    private void finishedAfterMn1Fails(
        final java.util.function.BiConsumer<TxnRuntime, java.util.function.Function<String, Future<Void>>> arm)
        throws Exception {
        final EmbeddedScythe.ComputeNode cnA = cnAWaitingForFailovers();
        final TxnRuntime runtime = cnA.on(loop()).runtime();
        final long[] before = {servingBalance(4), servingBalance(5)};
        final int[] faults = {1};
        final java.util.concurrent.CountDownLatch failed = new java.util.concurrent.CountDownLatch(1);
        on(() -> {
            arm.accept(runtime, mn -> {
                if (!mn.equals("mn1")) {
                    return Future.succeededFuture();
                }
                failed.countDown();
                return failWrite(faults, POSTED_AND_FAILED);
            });
            return Future.succeededFuture();
        });
        final long key = nextLedgerKey++;
        final Promise<Long> outcome = Promise.promise();
        loop().runOnContext(v -> cnA.on(loop()).run(txn -> transfer(txn, 4, 5, 25, key)).map(Coordinator.Outcome::result)
            .onComplete(outcome));
        assertThat(failed.await(10, TimeUnit.SECONDS)).as("a verb to mn1 was posted").isTrue();
        Thread.sleep(100); // the attempt waits for a configuration removing mn1
        assertThat(outcome.future().isComplete()).as("neither given up nor finished before the failover").isFalse();
        final Catalog catalog = runtime.catalog();
        final io.scythe.txn.MemoryNodeConfiguration without1 = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(outcome.future().await(20, TimeUnit.SECONDS)).as("committed").isEqualTo(key);
        acknowledged.add(key);
        assertThat(scythe.gaveUp()).as("cnA keeps serving").isEmpty();
        assertThat(faults[0]).as("the fault fired").isZero();
        assertThat(on(() -> Future.succeededFuture(io.scythe.txn.recovery.RedoLog.of(runtime).unfinishedRecords())))
            .as("its record released").isZero();
        assertThat(catalog.inFlightBefore(without1.epoch())).as("drained").isZero();
        assertThat(catalog.settled(without1.epoch())).isTrue();
        assertThat(new long[] {servingBalance(4), servingBalance(5)}).as("applied once, on the serving copies")
            .containsExactly(before[0] - 25, before[1] + 25);
        on(() -> {
            arm.accept(runtime, null);
            return Future.succeededFuture();
        });
        for (int i = 0; i < 3; i++) {
            assertThat(transferOn(cnA.on(loop()), 4, 5 + i, 5)).as("4 and 5 are free on the serving copies").isTrue();
        }
        checkServingCopies(catalog);
    }

    /**
     * 3 memory nodes with 1 backup each running scythe, and cnA, whose first loop waits up to 10 s for a configuration
     * removing a memory node a verb failed on ({@code TxnRuntime#failoverWaitNs}); one transfer 4 -> 5 committed.
     */
    private EmbeddedScythe.ComputeNode cnAWaitingForFailovers() throws Exception {
        memoryNodes = 3;
        replicas = 1;
        start("scythe");
        final EmbeddedScythe.ComputeNode cnA = scythe.addComputeNode("cnA", 1L << 32);
        final TxnRuntime runtime = cnA.on(loop()).runtime();
        on(() -> {
            runtime.failoverWaitNs(TimeUnit.SECONDS.toNanos(10));
            return Future.succeededFuture();
        });
        assertThat(transferOn(cnA.on(loop()), 4, 5, 7)).isTrue();
        return cnA;
    }

    private static long lowerMinusUpperOn(final Table t, final long key) {
        final int at = t.offsetOf(t.lookup(key));
        return t.objectMemory().getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
            - t.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET);
    }

    /**
     * MN rejoin (issue 23 §2): 3 memory nodes, 1 backup each. mn1 fails over (its backup of p1 on mn2 promoted) and
     * transfers go on without it, so its copies go stale; one of its objects is left with a stale Takeout ticket and
     * CAS word from its old life. mn1 rejoins (epoch 2: its copies are backups again, its loaded primary of p1 now
     * behind the promoted copy), and the re-replicator copies every key of p0 and p1 onto it while transfers run on
     * another loop. Then: each serving backup (mn1's included) equals its primary key by key (value, length, flags,
     * version), the rejoined copies have no lock word set, money conserved, every acknowledged transfer present, and
     * only then (epoch 3, rejoined) does mn1 count as a full copy: removing mn0 then promotes mn1's copy of p0.
     *
     * <p>With Takeout tickets also a record of an earlier term (issue 23): cnA committed 4 to 7 (p1) before the
     * failover, on mn1 as p1's primary, and stayed idle, so its finished record stays above its log's low water.
     * Removing mn2 (epoch 4) makes mn1's copy 0 p1's primary again, in a new term; its lock word of account 4 is set
     * (after a commit there) as a replacement process's fresh counters with a live holder of cnA's old ticket would
     * be, the memory node's ticket ledger not knowing cnA. Recovering cnA must
     * leave that holder's lock and account 4 alone: versions decide for a record of an earlier term (before terms,
     * recovery wrote cnA's old balance back over account 4 and released the holder's lock).
     */
    @Test
    void shouldReReplicateARejoiningMemoryNodeWhileTransfersRun() throws Exception {
        rejoinUnderLoad("scythe");
    }

    /**
     * The same with Aurogon (issue 20/23), whose commits lock no header: each key is written onto the rejoining copy
     * by a COPY the copy applies by the APPLY rule, and the raced transfer from account 4 (committed, its APPLY on
     * mn1, between the copier's read and its COPY of the older image) makes the verification copy it again; every
     * serving backup then equals its primary (version, length, flags, value). Before, aurogon was refused
     * ({@code ReReplicator#headerLocked}): a replacement never rejoined.
     */
    @Test
    void shouldReReplicateARejoiningAurogonMemoryNodeWhileTransfersRun() throws Exception {
        rejoinUnderLoad("aurogon");
    }

    /**
     * The same with CAS locks, through Motor (issue 19; it stands for FORD's case too, whose test it replaced: the same
     * CAS word, {@code MotorLockKind} delegating to {@code CasLockKind}): the copy also takes the object's room (its
     * CVT and version records), so every serving backup's CVT equals its primary's byte for byte (before: motor was
     * refused, its replacement memory node never rejoined; with the room not copied, account 6's CVT on mn1 differs).
     */
    @Test
    void shouldReReplicateARejoiningMemoryNodesMotorCvtsWhileTransfersRun() throws Exception {
        rejoinUnderLoad("motor");
        final Catalog catalog = recoverer().runtime().catalog();
        int compared = 0;
        for (final Catalog.Partition p : catalog.table("accounts").partitions()) {
            final Table primary = memoryNode(p.node()).table(p.descriptor().schema().id());
            final int room = io.scythe.txn.spi.ProtocolRegistry.protocol("motor").objectRoom(primary.schema());
            final int from = ObjectLayout.slotBytes(primary.schema().maxValueBytes());
            for (final Catalog.Replica b : p.backups()) {
                final Table backup = memoryNode(b.node()).table(b.descriptor().schema().id());
                for (long k = 0; k < ACCOUNTS; k++) {
                    final long pp = primary.lookup(k);
                    if (pp == 0) {
                        continue;
                    }
                    final byte[] x = new byte[room];
                    final byte[] y = new byte[room];
                    primary.objectMemory().getBytes(primary.offsetOf(pp) + from, x);
                    backup.objectMemory().getBytes(backup.offsetOf(backup.lookup(k)) + from, y);
                    assertThat(y).as("the CVT of account %d on %s as on its primary %s", k, b.node(), p.node())
                        .isEqualTo(x);
                    compared++;
                }
            }
        }
        assertThat(compared).as("accounts with a serving backup").isPositive();
    }

    private void rejoinUnderLoad(final String protocol) throws Exception {
        memoryNodes = 3;
        replicas = 1;
        start(protocol);
        final EmbeddedScythe.ComputeNode cn = scythe.addComputeNode("cnB", 2L << 32);
        final EmbeddedScythe.ComputeNode other = scythe.addComputeNode("cnC", 3L << 32);
        for (int i = 0; i < 6; i++) {
            assertThat(transferOn(cn.on(loop()), i, i + 7, 5)).isTrue();
        }
        final boolean tickets = protocol.equals("scythe");
        long oldTicket = -1;
        if (tickets) { // cnA's commit on p1 under mn1 as its primary (epoch 0), its ledger row on p1 too
            nextLedgerKey += Math.floorMod(1 - nextLedgerKey, 3);
            assertThat(transferOn(scythe.addComputeNode("cnA", 1L << 32).on(loop()), 4, 7, 6)).isTrue();
            final Table t = memoryNode("mn1").table("accounts");
            oldTicket = t.objectMemory().getLongVolatile(t.offsetOf(t.lookup(4)) + ObjectLayout.UPPER_OFFSET) - 1;
        }
        final Catalog catalog = cn.on(loop()).runtime().catalog();
        final io.scythe.txn.MemoryNodeConfiguration without1 = io.scythe.txn.MemoryNodeConfiguration.initial(3, 1)
            .without(1);
        assertThat(catalog.reconfigure(without1)).isTrue();
        assertThat(catalog.settled(without1.epoch())).isTrue();
        if (protocol.startsWith("aurogon")) { // the simulator's promotion of the copies now primary (no load runs)
            final java.util.Map<String, Set<Integer>> promoted = new java.util.TreeMap<>();
            for (final Catalog.Table t : catalog.tables()) {
                for (final Catalog.Partition p : t.partitions()) {
                    if (io.scythe.storage.BackupTables.backupOf(p.descriptor().schema()) != 0) {
                        promoted.computeIfAbsent(p.node(), n -> new java.util.TreeSet<>())
                            .add(p.descriptor().schema().id());
                    }
                }
            }
            for (final java.util.Map.Entry<String, Set<Integer>> e : promoted.entrySet()) {
                on(() -> {
                    io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol).promoted(memoryNode(e.getKey()),
                        e.getValue(), java.util.List.of(cn.on(loop()).runtime(), other.on(loop()).runtime()));
                    return Future.succeededFuture();
                });
            }
        }
        for (int i = 0; i < 8; i++) {
            assertThat(transferOn(cn.on(loop()), i, 15 - i, 11)).as("served without mn1").isTrue();
        }
        // mn1's old life: its loaded primary of account 1 left with a ticket queued and a CAS word taken.
        final Table stale = memoryNode("mn1").table("accounts");
        final int staleAt = stale.offsetOf(stale.lookup(1));
        if (!protocol.startsWith("aurogon")) { // Aurogon's objects carry no lock words (its format: none)
            stale.objectMemory().putLongVolatile(staleAt + ObjectLayout.LOWER_OFFSET, 99);
            stale.objectMemory().putLongVolatile(staleAt + ObjectLayout.CAS_LOCK_OFFSET, 77);
        }
        assertThat(stale.objectMemory().getLongVolatile(staleAt + ObjectLayout.VALUE_OFFSET))
            .as("mn1's copy of account 1 is stale").isNotEqualTo(servingBalance(1));

        if (protocol.startsWith("aurogon")) { // as ScytheNode marks a replacement: its copy 0 takes APPLYs as a backup
            io.scythe.txn.aurogon.ParticipantService.of(memoryNode("mn1")).replacement();
        }
        final io.scythe.txn.MemoryNodeConfiguration rejoin = without1.rejoin(1, 1);
        assertThat(catalog.reconfigure(rejoin)).isTrue();
        assertThat(catalog.settling()).isFalse();
        assertThat(catalog.table("accounts").partitionOf(1).backups()).extracting(Catalog.Replica::node)
            .containsExactly("mn1");
        // Transfers on loop 1 throughout the copy (each commit writes mn1's copies too from epoch 2 on).
        final java.util.concurrent.atomic.AtomicBoolean copying = new java.util.concurrent.atomic.AtomicBoolean(true);
        final Set<Long> duringCopy = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        final Promise<Void> load = Promise.promise();
        final Coordinator busy = other.on(scythe.loops().get(1));
        final long firstKey = nextLedgerKey;
        nextLedgerKey += 10_000;
        scythe.loops().get(1).runOnContext(v -> transfersWhile(busy, copying, firstKey, ran, duringCopy, load));
        final TxnRuntime runtime = cn.on(loop()).runtime();
        // Between the copier's read of account 4 (p1) and its write, a transfer from 4 commits (writing mn1's copy):
        // the copier's write then puts the older image there, and its verification must catch that and copy again.
        final long raceKey = nextLedgerKey++;
        final boolean[] raced = {false};
        final io.scythe.txn.recovery.ReReplicator copier = new io.scythe.txn.recovery.ReReplicator(runtime, protocol)
            .beforeWrite((table, key) -> {
                if (raced[0] || !table.equals("accounts") || key != 4) {
                    return Future.succeededFuture();
                }
                raced[0] = true;
                final Promise<Long> raceDone = Promise.promise();
                scythe.loops().get(1).runOnContext(v -> busy.run(txn -> transfer(txn, 4, 10, 17, raceKey))
                    .map(Coordinator.Outcome::result).onComplete(raceDone));
                return raceDone.future().map(k -> {
                    acknowledged.add(k);
                    return null;
                });
            });
        final io.scythe.txn.recovery.ReReplicator.Report report = on(() -> runtime.timers().after(2_000_000)
            .compose(v -> copier.copyOnto("mn1", rejoin.epoch())));
        assertThat(raced[0]).isTrue();
        assertThat(report.retries()).as("the raced key was copied again").isPositive();
        copying.set(false);
        load.future().await(20, TimeUnit.SECONDS);
        acknowledged.addAll(duringCopy);
        assertThat(report.copies()).as("p0's backup and p1's loaded primary, of accounts and ledger").isEqualTo(4);
        assertThat(report.keys()).as("every account and every ledger row of p0 and p1").isGreaterThanOrEqualTo(
            ACCOUNTS * 2 / 3);
        assertThat(ran.get()).as("transfers ran during the copy").isPositive();
        System.out.printf("rejoin %s: %d copies, %d keys, %d retries in %.1f ms; %d transfers ran meanwhile%n",
            protocol, report.copies(), report.keys(), report.retries(), report.nanos() / 1e6, ran.get());
        assertThat(catalog.reconfigure(rejoin.rejoined(1))).isTrue();
        for (int i = 0; i < 4; i++) { // not 4 or 10: their copies on mn1 are checked as the copier left them
            assertThat(transferOn(cn.on(loop()), i, 15 - i, 2)).as("after the rejoin").isTrue();
        }
        checkServingCopies(catalog);
        checkBackupsEqualPrimaries(catalog, "accounts");
        checkBackupsEqualPrimaries(catalog, "ledger");
        if (!protocol.startsWith("aurogon")) { // Aurogon's COPY writes the value and version only: it locks no word
            assertThat(stale.objectMemory().getLongVolatile(staleAt + ObjectLayout.LOWER_OFFSET))
                .as("stale ticket gone").isEqualTo(stale.objectMemory().getLongVolatile(staleAt
                    + ObjectLayout.UPPER_OFFSET));
            assertThat(stale.objectMemory().getLongVolatile(staleAt + ObjectLayout.CAS_LOCK_OFFSET)).isZero();
        }
        // Now mn1's copy is a full one: losing mn0 promotes it.
        assertThat(rejoin.rejoined(1).without(0).copies().get(0)).containsExactly(1);
        if (!tickets) {
            return;
        }
        final io.scythe.txn.MemoryNodeConfiguration without2 = rejoin.rejoined(1).without(2);
        assertThat(without2.primaryCopy(1)).as("p1's copy 0 primary again").isZero();
        assertThat(without2.primarySince(1)).as("in a new term").isEqualTo(without2.epoch());
        assertThat(without2.primarySince(0)).as("p0's primary kept its term").isZero();
        assertThat(catalog.reconfigure(without2)).isTrue();
        assertThat(catalog.settled(without2.epoch())).isTrue();
        final Table p1 = servingTable("accounts", 4);
        assertThat(p1).isSameAs(stale);
        final int at4 = p1.offsetOf(p1.lookup(4));
        // Commits on account 4 in the new term, its tickets from 0 again (the re-replicator cleared the lock word),
        // until a grant above cnA's old ticket prunes that one from mn1's ticket ledger (a replacement's is empty).
        for (int i = 0; i < 8 && p1.objectMemory().getLongVolatile(at4 + ObjectLayout.UPPER_OFFSET) <= oldTicket + 1;
             i++) {
            assertThat(transferOn(cn.on(loop()), 4, 10, 1)).as("p1 served by mn1 again").isTrue();
        }
        assertThat(transferOn(cn.on(loop()), 4, 10, 1)).isTrue();
        p1.objectMemory().putLongVolatile(at4 + ObjectLayout.UPPER_OFFSET, oldTicket);
        p1.objectMemory().putLongVolatile(at4 + ObjectLayout.LOWER_OFFSET, oldTicket + 1);
        final long balance4 = servingBalance(4);
        scythe.fence("cnA");
        final CnRecovery.Report old = recover("cnA");
        assertThat(old.committedRecords()).as("cnA's finished record is read").isPositive();
        assertThat(old.entriesApplied()).as("a record of an earlier term applies nothing").isZero();
        assertThat(servingBalance(4)).as("account 4 left as it is").isEqualTo(balance4);
        assertThat(p1.objectMemory().getLongVolatile(at4 + ObjectLayout.UPPER_OFFSET))
            .as("the live holder of ticket %d keeps its lock", oldTicket).isEqualTo(oldTicket);
    }

    /** The accounts the load during a copy moves money between: not 4 and 10, which the raced transfer moves. */
    private static final long[] BUSY_ACCOUNTS = {0, 1, 2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15};

    /** Runs transfers on {@code c} one after another while {@code copying}; acknowledged ones into {@code acked}. */
    private static void transfersWhile(final Coordinator c, final java.util.concurrent.atomic.AtomicBoolean copying,
                                       final long key, final java.util.concurrent.atomic.AtomicInteger ran,
                                       final Set<Long> acked, final Promise<Void> done) {
        if (!copying.get()) {
            done.complete();
            return;
        }
        final int i = ran.getAndIncrement();
        final long from = BUSY_ACCOUNTS[i % BUSY_ACCOUNTS.length];
        final long to = BUSY_ACCOUNTS[(i * 7 + 3) % BUSY_ACCOUNTS.length];
        c.run(txn -> transfer(txn, from, to == from ? BUSY_ACCOUNTS[(i + 1) % BUSY_ACCOUNTS.length] : to, 1 + i % 5,
            key)).onComplete(r -> {
            if (r.succeeded()) {
                acked.add(key);
            }
            transfersWhile(c, copying, key + 1, ran, acked, done);
        });
    }

    /** Every serving backup of {@code table} holds each key as its primary does: value, length, flags, version. */
    private void checkBackupsEqualPrimaries(final Catalog catalog, final String table) {
        for (final Catalog.Partition p : catalog.table(table).partitions()) {
            final Table primary = memoryNode(p.node()).table(p.descriptor().schema().id());
            final int[] keys = {0};
            primary.forEachKey((key, pointer) -> {
                keys[0]++;
                final int at = primary.offsetOf(pointer);
                final boolean deleted = (primary.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
                    & ObjectLayout.FLAG_DELETED) != 0;
                for (final Catalog.Replica b : p.backups()) {
                    final Table bt = memoryNode(b.node()).table(b.descriptor().schema().id());
                    final long bp = bt.lookup(key);
                    if (deleted && bp == 0) {
                        continue; // an abandoned insert: its backups may never have been located
                    }
                    assertThat(bp).as("%s key %d on %s", table, key, b.node()).isNotZero();
                    final int bat = bt.offsetOf(bp);
                    if (deleted) { // an abandoned insert (its version the memory node's): reads as absent there too
                        assertThat(bt.objectMemory().getShort(bat + ObjectLayout.FLAGS_OFFSET)
                            & ObjectLayout.FLAG_DELETED).as("%s key %d deleted on %s", table, key, b.node())
                            .isNotZero();
                        continue;
                    }
                    final int length = primary.objectMemory().getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET);
                    assertThat(bt.objectMemory().getLong(bat + ObjectLayout.VERSION_OFFSET))
                        .as("%s key %d version on %s", table, key, b.node())
                        .isEqualTo(primary.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET));
                    // Length and flags; not the incarnation, which numbers each copy's own slot.
                    assertThat(bt.objectMemory().getLong(bat + ObjectLayout.VALUE_LENGTH_OFFSET) & 0xffff_ffff_ffffL)
                        .as("%s key %d length and flags on %s", table, key, b.node())
                        .isEqualTo(primary.objectMemory().getLong(at + ObjectLayout.VALUE_LENGTH_OFFSET)
                            & 0xffff_ffff_ffffL);
                    for (int v = 0; v < length; v += 8) {
                        assertThat(bt.objectMemory().getLong(bat + ObjectLayout.VALUE_OFFSET + v))
                            .as("%s key %d value on %s", table, key, b.node())
                            .isEqualTo(primary.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET + v));
                    }
                    assertNoLock(bt.objectMemory(), bat, table + " key " + key + " on " + b.node());
                }
            });
            assertThat(keys[0]).as("%s keys on %s", table, p.node()).isPositive();
        }
    }

    private LogDb memoryNode(final String name) {
        return scythe.memoryNodes().get(Integer.parseInt(name.substring(2)));
    }

    private Table servingTable(final String table, final long key) throws Exception {
        final Catalog.Partition p = recoverer().runtime().catalog().table(table).partitionOf(key);
        return memoryNode(p.node()).table(p.descriptor().schema().id());
    }

    private long servingBalance(final long account) throws Exception {
        final Table t = servingTable("accounts", account);
        return t.objectMemory().getLongVolatile(t.offsetOf(t.lookup(account)) + ObjectLayout.VALUE_OFFSET);
    }

    private long servingVersion(final long account) throws Exception {
        final Table t = servingTable("accounts", account);
        return t.objectMemory().getLongVolatile(t.offsetOf(t.lookup(account)) + ObjectLayout.VERSION_OFFSET);
    }

    /**
     * {@link #checkInvariants} on the copies that serve now (primary first): money conserved, every acknowledged
     * transfer present once, balances equal to the ledger's, no lock held; each serving backup equal to its primary.
     */
    private void checkServingCopies(final io.scythe.txn.Catalog catalog) {
        final long[] expected = new long[ACCOUNTS];
        java.util.Arrays.fill(expected, INITIAL);
        final Set<Long> present = new HashSet<>();
        for (long k = 1; k < nextLedgerKey; k++) {
            final Catalog.Partition p = catalog.table("ledger").partitionOf(k);
            final Table ledger = memoryNode(p.node()).table(p.descriptor().schema().id());
            final long pointer = ledger.lookup(k);
            if (pointer == 0) {
                continue;
            }
            final int at = ledger.offsetOf(pointer);
            final org.agrona.concurrent.AtomicBuffer m = ledger.objectMemory();
            assertNoLock(m, at, "ledger " + k);
            if ((m.getShort(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
                continue;
            }
            present.add(k);
            expected[(int) m.getLong(at + ObjectLayout.VALUE_OFFSET)] -= m.getLong(at + ObjectLayout.VALUE_OFFSET + 16);
            expected[(int) m.getLong(at + ObjectLayout.VALUE_OFFSET + 8)] += m.getLong(at + ObjectLayout.VALUE_OFFSET
                + 16);
        }
        long total = 0;
        for (long k = 0; k < ACCOUNTS; k++) {
            final Catalog.Partition p = catalog.table("accounts").partitionOf(k);
            final Table t = memoryNode(p.node()).table(p.descriptor().schema().id());
            final int at = t.offsetOf(t.lookup(k));
            final long balance = t.objectMemory().getLongVolatile(at + ObjectLayout.VALUE_OFFSET);
            assertThat(balance).as("account %d: initial plus its ledger rows", k).isEqualTo(expected[(int) k]);
            assertNoLock(t.objectMemory(), at, "account " + k);
            for (final Catalog.Replica b : p.backups()) {
                final Table bt = memoryNode(b.node()).table(b.descriptor().schema().id());
                assertThat(bt.objectMemory().getLongVolatile(bt.offsetOf(bt.lookup(k)) + ObjectLayout.VALUE_OFFSET))
                    .as("account %d's serving backup on %s", k, b.node()).isEqualTo(balance);
            }
            total += balance;
        }
        assertThat(total).as("money conserved").isEqualTo(ACCOUNTS * INITIAL);
        assertThat(present).as("every acknowledged transfer is in the data").containsAll(acknowledged);
    }

    private long balanceOf(final long account) {
        final Table t = scythe.memoryNodes().get((int) (account % scythe.memoryNodes().size())).table("accounts");
        return t.objectMemory().getLongVolatile(t.offsetOf(t.lookup(account)) + ObjectLayout.VALUE_OFFSET);
    }

    private long lowerMinusUpper(final long account) {
        final Table t = scythe.memoryNodes().get((int) (account % scythe.memoryNodes().size())).table("accounts");
        final int at = t.offsetOf(t.lookup(account));
        return t.objectMemory().getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
            - t.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET);
    }

    private static void waitUntil(final java.util.function.BooleanSupplier condition) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("condition within 10 s").isNegative();
            Thread.sleep(5);
        }
    }
}
