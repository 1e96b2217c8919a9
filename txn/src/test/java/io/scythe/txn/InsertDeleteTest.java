package io.scythe.txn;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Inserts and deletes in every protocol: visible only once committed, atomic with the rest, duplicates abort. */
class InsertDeleteTest {
    private static final String T = "rows";
    private OneMemoryNode node;
    private Table table;

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode(T, 64);
        table = node.table;
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

    /** An attempt of the protocol named by the test: a {@link Protocol} name, or scythe/occ and scythe/tocc. */
    private static Txn begin(final String protocol, final TxnRuntime rt) {
        switch (protocol) {
            case "scythe/occ":
                return io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, false);
            case "scythe/tocc":
                return io.scythe.txn.spi.ProtocolRegistry.protocol("scythe").begin(rt, true);
            default:
                return io.scythe.txn.spi.ProtocolRegistry.protocol(protocol).begin(rt, false);
        }
    }

    /** The memory node of the test (subclasses set its lookup mode). */
    OneMemoryNode node() {
        return node;
    }

    private <R> R on(final Function<TxnRuntime, Future<R>> body) throws Exception {
        return node.on(body);
    }

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    /** "ok", the abort reason's label, or "not-found". */
    private static Future<String> outcome(final Future<?> f) {
        return f.transform(ar -> Future.succeededFuture(ar.succeeded() ? "ok"
            : ar.cause() instanceof AbortException a ? a.reason().label()
            : ar.cause() instanceof UnknownKeyException ? "not-found" : ar.cause().toString()));
    }

    /** The committed value of {@code key} as a fresh attempt reads it, or -1 when not found. */
    private Future<Long> readCommitted(final TxnRuntime rt, final String protocol, final long key) {
        final Txn t = begin(protocol, rt);
        return t.read(T, key).transform(ar -> t.commit().transform(c -> ar.succeeded()
            ? Future.succeededFuture(ar.result().getLong(0))
            : ar.cause() instanceof UnknownKeyException ? Future.succeededFuture(-1L) : Future.failedFuture(ar.cause())));
    }

    /** Objects whose Takeout Lock is queued on or whose CAS lock word is taken. */
    private long locksHeld() {
        long held = 0;
        final int slot = table.describe().objectSlotBytes();
        for (int at = 0; at + slot <= table.objectMemory().capacity(); at += slot) {
            if (table.objectMemory().getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
                != table.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET)
                || table.objectMemory().getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET) != 0) {
                held++;
            }
        }
        return held;
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldShowAnInsertOnlyOnceCommittedWithTheOtherWrites(final String protocol) throws Exception {
        final List<Object> seen = on(rt -> {
            final Txn t = begin(protocol, rt);
            return t.readForUpdate(T, 1).compose(v -> {
                t.write(T, 1, value(v.getLong(0) - 5), 0, 8);
                t.insert(T, 100, value(5), 0, 8);
                return t.read(T, 100); // its own insert
            }).compose(own -> readCommitted(rt, protocol, 100).compose(before -> t.commit()
                .compose(ts -> readCommitted(rt, protocol, 100)).compose(after -> readCommitted(rt, protocol, 1)
                    .map(one -> List.<Object>of(own.getLong(0), before, after, one)))));
        });
        assertThat(seen).containsExactly(5L, -1L, 5L, 95L);
        assertThat(locksHeld()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldLeaveNothingOfAnAbortedInsert(final String protocol) throws Exception {
        final List<Object> seen = on(rt -> {
            final Txn t = begin(protocol, rt);
            t.insert(T, 101, value(7), 0, 8);
            return t.abort().compose(v -> readCommitted(rt, protocol, 101)).compose(after -> {
                // A commit that fails after its INSERT RPCs ran: key 102 is new, key 3 exists (duplicate).
                final Txn u = begin(protocol, rt);
                u.insert(T, 102, value(8), 0, 8);
                u.insert(T, 3, value(9), 0, 8);
                return outcome(u.commit()).compose(o -> readCommitted(rt, protocol, 102)
                    .compose(k102 -> readCommitted(rt, protocol, 3).map(k3 -> List.<Object>of(after, o, k102, k3))));
            });
        });
        assertThat(seen).containsExactly(-1L, AbortReason.DUPLICATE_KEY.label(), -1L, 100L);
        assertThat(locksHeld()).isZero();
        // The abandoned insert of 102 does not block a later one.
        final String again = on(rt -> {
            final Txn t = begin(protocol, rt);
            t.insert(T, 102, value(12), 0, 8);
            return outcome(t.commit());
        });
        assertThat(again).isEqualTo("ok");
        final long k102 = on(rt -> readCommitted(rt, protocol, 102));
        assertThat(k102).isEqualTo(12L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldAbortADuplicateInsertAndChangeNothing(final String protocol) throws Exception {
        final List<String> seen = on(rt -> {
            final Txn t = begin(protocol, rt);
            return t.readForUpdate(T, 4).compose(v -> {
                t.write(T, 4, value(1), 0, 8);
                t.insert(T, 5, value(2), 0, 8); // key 5 exists, untouched by t: the memory node finds it
                return outcome(t.commit());
            }).compose(o1 -> {
                final Txn u = begin(protocol, rt);
                return u.read(T, 6).compose(v -> {
                    u.insert(T, 6, value(3), 0, 8); // read by u: found at once
                    return outcome(u.commit());
                }).map(o2 -> List.of(o1, o2));
            });
        });
        assertThat(seen).containsExactly(AbortReason.DUPLICATE_KEY.label(), AbortReason.DUPLICATE_KEY.label());
        for (final long k : new long[] {4, 5, 6}) {
            assertThat(node.valueOf(k)).as("key " + k).isEqualTo(100);
        }
        assertThat(locksHeld()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldFindADeletedKeyNotFoundAndLetItBeInsertedAgain(final String protocol) throws Exception {
        final List<Object> seen = on(rt -> {
            final Txn t = begin(protocol, rt);
            return t.read(T, 7).compose(v -> {
                t.delete(T, 7);
                return outcome(t.read(T, 7)).compose(own -> t.commit().map(own));
            }).compose(own -> readCommitted(rt, protocol, 7).compose(gone -> {
                final Txn u = begin(protocol, rt);
                return outcome(u.read(T, 7)).compose(r -> {
                    u.insert(T, 7, value(70), 0, 8); // over the delete it read
                    return outcome(u.commit());
                }).compose(revived -> readCommitted(rt, protocol, 7).compose(back -> {
                    final Txn w = begin(protocol, rt);
                    return w.read(T, 7).compose(x -> {
                        w.delete(T, 7);
                        return w.commit();
                    }).compose(ts -> {
                        final Txn x = begin(protocol, rt);
                        x.insert(T, 7, value(71), 0, 8); // untouched: revived by the INSERT RPC
                        return outcome(x.commit());
                    }).compose(o -> readCommitted(rt, protocol, 7).map(last -> List.<Object>of(own, gone, revived,
                        back, o, last)));
                }));
            }));
        });
        assertThat(seen).containsExactly("not-found", -1L, "ok", 70L, "ok", 71L);
        assertThat(locksHeld()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldCommitExactlyOneOfManyConcurrentInsertsOfOneKey(final String protocol) throws Exception {
        final List<String> outcomes = on(rt -> {
            final List<Future<String>> all = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                final Txn t = begin(protocol, rt);
                t.insert(T, 200, value(1000 + i), 0, 8);
                all.add(outcome(t.commit()));
            }
            return Future.all(all).map(cf -> cf.<String>list());
        });
        assertThat(outcomes.stream().filter("ok"::equals).count()).isEqualTo(1);
        // While the winner holds its new object the key's existence is not settled: the others are told LOCKED (and
        // retried by a coordinator), or DUPLICATE_KEY once it committed.
        assertThat(outcomes.stream().filter(o -> !"ok".equals(o))).hasSize(7)
            .allMatch(o -> o.equals(AbortReason.LOCKED.label()) || o.equals(AbortReason.DUPLICATE_KEY.label()));
        final String retried = on(rt -> {
            final Txn t = begin(protocol, rt);
            t.insert(T, 200, value(2000), 0, 8);
            return outcome(t.commit());
        });
        assertThat(retried).isEqualTo(AbortReason.DUPLICATE_KEY.label());
        final long committed = on(rt -> readCommitted(rt, protocol, 200));
        assertThat(committed).isEqualTo(1000 + outcomes.indexOf("ok"));
        assertThat(locksHeld()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ", "scythe-occ"})
    void shouldFailAnAttemptThatReadAKeyAbsentWhichWasInsertedBeforeItCommitted(final String protocol)
        throws Exception {
        final String seen = on(rt -> {
            final Txn reader = begin(protocol, rt);
            return outcome(reader.read(T, 300)).compose(absent -> {
                final Txn inserter = begin(protocol, rt);
                inserter.insert(T, 300, value(1), 0, 8);
                return inserter.commit();
            }).compose(ts -> reader.readForUpdate(T, 8)).compose(v -> {
                reader.write(T, 8, value(0), 0, 8);
                return outcome(reader.commit());
            });
        });
        assertThat(seen).isEqualTo(AbortReason.VALIDATION.label());
        assertThat(node.valueOf(8)).isEqualTo(100);
        assertThat(locksHeld()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "ford-occ", "farm-occ"})
    void shouldRejectBadInsertsClearlyAndBufferNothing(final String protocol) throws Exception {
        final List<String> seen = on(rt -> {
            final Txn t = begin(protocol, rt);
            final List<String> errors = new ArrayList<>();
            try {
                t.insert(T, 400, value(1), 0, 4);
            } catch (final IllegalArgumentException e) {
                errors.add("length");
            }
            try {
                t.insert("nope", 400, value(1), 0, 8);
            } catch (final UnknownKeyException e) {
                errors.add("table");
            }
            try {
                t.delete(T, 9);
            } catch (final IllegalStateException e) {
                errors.add("unread");
            }
            return t.commit().compose(ts -> readCommitted(rt, protocol, 400)).map(k -> {
                errors.add("k400=" + k);
                return errors;
            });
        });
        assertThat(seen).containsExactly("length", "table", "unread", "k400=-1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "ford-occ"})
    void shouldFailAnInsertIntoAFullTableWithAClearErrorAndLeaveNothing(final String protocol) throws Exception {
        // 64 slots, 16 loaded: 48 inserts fit; a transaction of two more finds the table full after its first.
        for (long k = 1000; k < 1048; k++) {
            final long key = k;
            final String inserted = on(rt -> {
                final Txn t = begin(protocol, rt);
                t.insert(T, key, value(key), 0, 8);
                return outcome(t.commit());
            });
            assertThat(inserted).isEqualTo("ok");
        }
        final String full = on(rt -> {
            final Txn t = begin(protocol, rt);
            t.insert(T, 2000, value(1), 0, 8);
            return outcome(t.commit());
        });
        assertThat(full).contains("IllegalStateException").contains("table " + T).contains("is full");
        assertThat(table.lookup(2000)).isZero();
        assertThat(locksHeld()).isZero();
    }
}
