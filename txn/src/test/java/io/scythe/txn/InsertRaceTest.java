package io.scythe.txn;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Races around inserts, deletes and absent keys found by review, each replayed as it happened: a duplicate decided
 * while an INSERT was in flight, a key read absent and then present in one attempt, a read-only attempt whose absent
 * key was inserted and deleted by others across its reads (a fractured read), and abandoned inserts reclaimed under
 * a reviver or reused by another key.
 */
class InsertRaceTest {
    private static final String T = "rows";
    private OneMemoryNode node;
    private Table table;

    @BeforeEach
    void setUp() throws Exception {
        node = newNode();
        table = node.table;
    }

    /** How the tests' runtimes look up keys past their cache (RPC here; one-sided in a subclass). */
    io.scythe.storage.remote.RemoteTable.LookupMode lookupMode() {
        return io.scythe.storage.remote.RemoteTable.LookupMode.RPC;
    }

    private OneMemoryNode newNode() throws Exception {
        final OneMemoryNode fresh = new OneMemoryNode(T, 64);
        fresh.lookupMode = lookupMode();
        return fresh;
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

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

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    private static Future<String> outcome(final Future<?> f) {
        return f.transform(ar -> Future.succeededFuture(ar.succeeded() ? "ok"
            : ar.cause() instanceof AbortException a ? a.reason().label()
            : ar.cause() instanceof UnknownKeyException ? "not-found" : ar.cause().toString()));
    }

    private static Future<UnsafeBuffer> readOrNull(final Txn t, final long key) {
        return t.read(T, key).recover(e -> e instanceof UnknownKeyException ? Future.succeededFuture(null)
            : Future.failedFuture(e));
    }

    /** Whether {@code key}'s object is held or queued on (CAS word taken, or tickets outstanding). */
    private boolean held(final long key) {
        final long p = table.lookup(key);
        if (p == 0) {
            return false;
        }
        final int at = table.offsetOf(p);
        return table.objectMemory().getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
            != table.objectMemory().getLongVolatile(at + ObjectLayout.UPPER_OFFSET)
            || table.objectMemory().getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET) != 0;
    }

    /** The committed value of {@code key} as a fresh attempt reads it, or -1 when absent. */
    private long committed(final String protocol, final long key) throws Exception {
        return node.on(rt -> {
            final Txn t = begin(protocol, rt);
            return readOrNull(t, key).compose(v -> t.commit().map(c -> v == null ? -1L : v.getLong(0)));
        });
    }

    /** An attempt whose insert of a key it read present fails leaves nothing held of its other inserts. */
    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ"})
    void shouldLockNothingWhenTheAttemptInsertedAKeyItSawPresent(final String protocol) throws Exception {
        final List<String> seen = node.on(rt -> {
            final Txn t = begin(protocol, rt);
            return t.read(T, 3).compose(v -> {
                t.insert(T, 40, value(1), 0, 8); // a new key: an INSERT RPC, if the commit sent any
                t.insert(T, 3, value(1), 0, 8); // read present: a duplicate
                return outcome(t.commit());
            }).compose(o -> rt.timers().after(2_000_000).map(x -> o)).compose(o -> {
                final Txn u = begin(protocol, rt);
                u.insert(T, 40, value(2), 0, 8);
                return outcome(u.commit()).map(o2 -> List.of(o, o2));
            });
        });
        assertThat(seen).containsExactly(AbortReason.DUPLICATE_KEY.label(), "ok");
        assertThat(held(40)).isFalse();
    }

    /** A key read absent reads absent again in the same attempt, and its absence is validated at commit. */
    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ"})
    void shouldNotCommitAnAttemptThatReadAKeyAbsentWhichWasInsertedBeforeItReadItAgain(final String protocol)
        throws Exception {
        final List<Object> seen = node.on(rt -> {
            final Txn r = begin(protocol, rt);
            return readOrNull(r, 40).compose(first -> {
                final Txn w = begin(protocol, rt);
                w.insert(T, 40, value(7), 0, 8);
                return outcome(w.commit()).compose(wo -> readOrNull(r, 40).compose(second -> r.read(T, 5)
                    .compose(x -> {
                        r.write(T, 5, value(x.getLong(0) + 1), 0, 8);
                        return outcome(r.commit());
                    }).map(ro -> List.<Object>of(first == null ? "absent" : "present", wo,
                        second == null ? "absent" : "present", ro))));
            });
        });
        assertThat(seen).containsExactly("absent", "ok", "absent", AbortReason.VALIDATION.label());
    }

    /**
     * R reads K absent; W inserts K and writes Y; R reads Y (W's) and X; D reads K and X, deletes K and writes X; R
     * and D commit at once. If both commit, R saw "after W" (Y), "K absent" and "before D" (X): no serial order has
     * all three. Accepting K "deleted and unlocked" at R's validation let that through; a key read absent must still
     * be missing from the index. Several start offsets of D, as the race depends on them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "ford-occ", "farm-occ"})
    void shouldNotLetAReadOnlyAttemptSeeAnInsertAndNotItsDelete(final String protocol) throws Exception {
        for (final long delayNs : new long[] {-1, 0, 1_000, 2_000, 4_000, 8_000}) {
            node.close();
            node = newNode();
            table = node.table;
            final List<String> seen = node.on(rt -> {
                final Txn r = begin(protocol, rt);
                return readOrNull(r, 40).compose(k -> {
                    final Txn w = begin(protocol, rt);
                    w.insert(T, 40, value(7), 0, 8);
                    return w.read(T, 6).compose(wy -> {
                        w.write(T, 6, value(wy.getLong(0) + 1), 0, 8);
                        return outcome(w.commit());
                    }).compose(wo -> r.read(T, 6).compose(y -> r.read(T, 5)).compose(x -> {
                        final Txn d = begin(protocol, rt);
                        return d.read(T, 40).compose(dk -> d.read(T, 5)).compose(dx -> {
                            d.delete(T, 40);
                            d.write(T, 5, value(dx.getLong(0) + 1), 0, 8);
                            final Future<String> rc = outcome(r.commit());
                            final Future<String> dc = delayNs < 0 ? outcome(d.commit())
                                : rt.timers().after(delayNs).compose(v -> outcome(d.commit()));
                            return Future.join(rc, dc).transform(ar -> Future.succeededFuture(
                                List.of(wo, rc.result(), dc.result())));
                        });
                    }));
                });
            });
            assertThat(seen.get(0)).as("W").isEqualTo("ok");
            assertThat(seen.subList(1, 3)).as("R and D, with D after " + delayNs + " ns").doesNotContainSequence(
                "ok", "ok");
        }
    }

    /**
     * An abandoned insert reclaimed (the eviction verticle's round) before an attempt that reads the key inserts it:
     * the attempt either finds the key absent and creates it, or aborts; it never commits into the freed slot.
     */
    @ParameterizedTest
    @ValueSource(strings = {"scythe/occ", "scythe/tocc", "ford-occ", "farm-occ"})
    void shouldNeverCommitIntoAReclaimedSlot(final String protocol) throws Exception {
        final String setup = "scythe/tocc".equals(protocol) ? "scythe/occ" : protocol;
        final String t2 = node.on(rt -> {
            final Txn t1 = begin(setup, rt);
            return t1.read(T, 5).compose(x -> {
                t1.insert(T, 40, value(1), 0, 8);
                final Txn u = begin(setup, rt); // changes what T1 read: T1 fails validation and abandons 40
                return u.read(T, 5).compose(ux -> {
                    u.write(T, 5, value(ux.getLong(0) + 1), 0, 8);
                    return u.commit();
                }).compose(uc -> outcome(t1.commit()));
            }).compose(t1o -> {
                table.reclaim(Long.MAX_VALUE);
                final Txn t = begin(protocol, rt);
                return readOrNull(t, 40).compose(k -> {
                    t.insert(T, 40, value(2), 0, 8);
                    return outcome(t.commit());
                });
            });
        });
        assertThat(committed(setup, 40)).as("T2 " + t2).isEqualTo("ok".equals(t2) ? 2L : -1L);
        assertThat(held(40)).isFalse();
    }

    /**
     * An attempt that read an abandoned (deleted) object, whose slot is then reclaimed and reused by another key,
     * inserts its key: nothing of it may land on the other key.
     */
    @ParameterizedTest
    @ValueSource(strings = {"scythe/tocc", "ford-occ"})
    void shouldLeaveTheKeyThatReusedASlotAlone(final String protocol) throws Exception {
        final String setup = "ford-occ".equals(protocol) ? protocol : "scythe/occ";
        final List<String> seen = node.on(rt -> {
            final Txn t1 = begin(setup, rt);
            return t1.read(T, 5).compose(x -> {
                t1.insert(T, 40, value(1), 0, 8);
                final Txn u = begin(setup, rt);
                return u.read(T, 5).compose(ux -> {
                    u.write(T, 5, value(ux.getLong(0) + 1), 0, 8);
                    return u.commit();
                }).compose(uc -> outcome(t1.commit()));
            }).compose(t1o -> {
                final Txn t = begin(protocol, rt);
                return outcome(t.readForUpdate(T, 40)).compose(read -> {
                    table.reclaim(Long.MAX_VALUE);
                    final Txn i = begin(setup, rt);
                    i.insert(T, 41, value(4141), 0, 8);
                    return outcome(i.commit()).compose(io -> {
                        t.insert(T, 40, value(4040), 0, 8);
                        return outcome(t.commit()).map(to -> List.of(read, io, to));
                    });
                });
            });
        });
        assertThat(seen.get(1)).as("insert of 41").isEqualTo("ok");
        assertThat(committed(setup, 41)).as("41 after " + seen).isEqualTo(4141L);
        assertThat(held(41)).isFalse();
        assertThat(held(40)).isFalse();
    }
}
