package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.rcc.waitdie.WaitDieTxn;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * NOWAIT and WAITDIE on one memory node, in every primitive form: a write commits and leaves no word held; NOWAIT
 * aborts on a taken word; WAITDIE's younger requester dies and its older one waits until the holder commits (the
 * one-sided waiter by re-posting, the RPC one on the memory node's waiting list); an abort releases everything.
 */
class RccLockingTest {
    private static final String[] FORMS = {"primitive=onesided", "primitive=rpc", "hybrid=010111", "hybrid=101000",
        "primitive=onesided+doorbell=off"};

    private static UnsafeBuffer longValue(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    private static void assertNothingHeld(final OneMemoryNode node) {
        for (long k = 0; k < 16; k++) {
            final int at = node.table.offsetOf(node.table.lookup(k));
            assertThat(node.table.objectMemory().getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET)).as("lock of " + k)
                .isZero();
            assertThat(node.table.objectMemory().getLongVolatile(at + TupleFormat.TTS_OFFSET)).as("tts of " + k)
                .isZero();
        }
    }

    private static Future<Long> increment(final Txn txn, final long key, final long by) {
        return txn.read("items", key).compose(v -> {
            txn.write("items", key, longValue(v.getLong(0) + by), 0, 8);
            return txn.commit();
        });
    }

    private static String outcome(final Future<?> f) {
        if (!f.isComplete()) {
            return "pending";
        }
        return f.succeeded() ? "ok" : f.cause() instanceof AbortException a ? "aborted " + a.reason()
            : "failed " + f.cause();
    }

    @ParameterizedTest
    @ValueSource(strings = {"rcc-nowait", "rcc-waitdie", "rcc-occ"})
    void shouldCommitWritesAndReleaseEveryWordInEveryForm(final String name) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            long expected = 100;
            for (final String form : FORMS) {
                final Protocol p = ProtocolRegistry.protocol(name + ":" + form);
                final long versionBefore = node.versionOf(1);
                node.on(rt -> {
                    final Txn txn = p.begin(rt, false);
                    // key 2 only read: its read lock is released at commit too
                    return txn.read("items", 2).compose(v -> increment(txn, 1, 5));
                });
                expected += 5;
                assertThat(node.valueOf(1)).as(form).isEqualTo(expected);
                assertThat(node.versionOf(1)).as(form).isGreaterThan(versionBefore);
                assertThat(node.valueOf(2)).isEqualTo(100);
                assertNothingHeld(node);
            }
        }
    }

    /**
     * With a redo log, the Log stage counts the commit as past its point of no return ({@code Catalog#decided}); the
     * commit chain ends that count once committed (a drain would wait for it forever otherwise).
     */
    @ParameterizedTest
    @ValueSource(strings = {"rcc-nowait:primitive=onesided", "rcc-occ:primitive=rpc"})
    void shouldNoLongerCountACommitPastItsPointOfNoReturnOnceCommitted(final String name) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol(name);
            final long stillDecided = node.on(rt -> {
                io.scythe.txn.recovery.RedoLog.enable(rt, 64 << 10); // its Log stage writes a record
                return increment(p.begin(rt, false), 1, 5).map(ts -> rt.catalog().inFlightBefore(Long.MAX_VALUE));
            });
            assertThat(stillDecided).as("commits counted past their point of no return").isZero();
            assertThat(node.valueOf(1)).isEqualTo(105);
            assertNothingHeld(node);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"primitive=onesided", "primitive=rpc"})
    void shouldAbortNowaitAtOnceOnATakenWord(final String form) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol("rcc-nowait:" + form);
            final List<String> seen = node.on(rt -> {
                final Txn holder = p.begin(rt, false);
                final Txn other = p.begin(rt, false);
                return holder.read("items", 3).compose(v -> {
                    final Future<?> refused = other.read("items", 3);
                    return refused.transform(x -> Future.succeededFuture(outcome(refused)))
                        .compose(o -> other.abort().compose(y -> increment(holder, 3, 1)).map(ts -> List.of(o)));
                });
            });
            assertThat(seen).containsExactly("aborted locked");
            assertThat(node.valueOf(3)).isEqualTo(101);
            assertNothingHeld(node);
        }
    }


    @ParameterizedTest
    @ValueSource(strings = {"primitive=onesided", "primitive=rpc"})
    void shouldLetTheYoungerDieAndTheOlderWaitUntilTheHolderCommits(final String form) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol("rcc-waitdie:" + form);
            final List<String> seen = node.on(rt -> {
                final Txn older = p.begin(rt, false);
                final Txn holder = p.begin(rt, false);
                final Txn younger = p.begin(rt, false);
                assertThat(((WaitDieTxn) older).ts()).isLessThan(((WaitDieTxn) holder).ts());
                assertThat(((WaitDieTxn) holder).ts()).isLessThan(((WaitDieTxn) younger).ts());
                final List<String> out = new ArrayList<>();
                return holder.read("items", 4).compose(v -> {
                    final Future<UnsafeBuffer> dies = younger.read("items", 4);
                    final Future<UnsafeBuffer> waits = older.read("items", 4);
                    return dies.transform(x -> Future.succeededFuture()).compose(x -> rt.timers().after(50_000))
                        .compose(x -> {
                            out.add("younger " + outcome(dies));
                            out.add("older after 50us " + outcome(waits));
                            return younger.abort();
                        }).compose(x -> {
                            holder.write("items", 4, longValue(v.getLong(0) + 10), 0, 8);
                            return holder.commit();
                        }).compose(ts -> waits).compose(w -> {
                            out.add("older read " + w.getLong(0));
                            older.write("items", 4, longValue(w.getLong(0) + 1), 0, 8);
                            return older.commit();
                        }).map(ts -> out);
                });
            });
            assertThat(seen).containsExactly("younger aborted locked", "older after 50us pending", "older read 110");
            assertThat(node.valueOf(4)).isEqualTo(111);
            assertNothingHeld(node);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rcc-nowait:primitive=onesided", "rcc-nowait:primitive=rpc",
        "rcc-waitdie:primitive=onesided", "rcc-waitdie:primitive=rpc", "rcc-occ:primitive=rpc"})
    void shouldReleaseEveryWordOnAbort(final String name) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol(name);
            node.on(rt -> {
                final Txn txn = p.begin(rt, false);
                return txn.read("items", 5).compose(v -> txn.read("items", 6)).compose(v -> {
                    txn.write("items", 6, longValue(1), 0, 8);
                    return txn.abort();
                });
            });
            assertThat(node.valueOf(6)).isEqualTo(100);
            assertNothingHeld(node);
            // and the words are usable again
            node.on(rt -> increment(p.begin(rt, false), 5, 1));
            assertThat(node.valueOf(5)).isEqualTo(101);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"primitive=onesided", "primitive=rpc", "hybrid=010111"})
    void shouldReadOccUnlockedAndAbortAtValidationWhenAReadRecordChanged(final String form) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol("rcc-occ:" + form);
            final List<String> seen = node.on(rt -> {
                final Txn reader = p.begin(rt, false);
                final Txn writer = p.begin(rt, false);
                return reader.read("items", 7).compose(v -> {
                    // the read took no lock: another transaction writes the record and commits meanwhile
                    assertThat(node.table.objectMemory().getLongVolatile(node.table.offsetOf(node.table.lookup(7))
                        + ObjectLayout.CAS_LOCK_OFFSET)).isZero();
                    return increment(writer, 7, 1);
                }).compose(ts -> reader.read("items", 8)).compose(v -> {
                    reader.write("items", 8, longValue(v.getLong(0) + 1), 0, 8);
                    final Future<Long> commit = reader.commit();
                    return commit.transform(x -> Future.succeededFuture(List.of(outcome(commit))));
                });
            });
            assertThat(seen).containsExactly("aborted validation");
            assertThat(node.valueOf(7)).isEqualTo(101);
            assertThat(node.valueOf(8)).isEqualTo(100);
            assertNothingHeld(node);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"primitive=onesided", "primitive=rpc"})
    void shouldAbortOccAtItsLockWhenTheWrittenRecordChangedSinceItsRead(final String form) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32)) {
            final Protocol p = ProtocolRegistry.protocol("rcc-occ:" + form);
            final List<String> seen = node.on(rt -> {
                final Txn slow = p.begin(rt, false);
                final Txn fast = p.begin(rt, false);
                return slow.read("items", 9).compose(v -> increment(fast, 9, 1).compose(ts -> {
                    slow.write("items", 9, longValue(v.getLong(0) + 10), 0, 8);
                    final Future<Long> commit = slow.commit();
                    return commit.transform(x -> Future.succeededFuture(List.of(outcome(commit))));
                }));
            });
            assertThat(seen).containsExactly("aborted validation");
            assertThat(node.valueOf(9)).isEqualTo(101); // not a lost update
            assertNothingHeld(node);
        }
    }
}
