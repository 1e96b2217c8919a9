package io.scythe.txn.onesided;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.OnRowsNode;
import io.scythe.txn.Txn;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A committed attempt's image and new-value buffers go back to the loop's {@link BufferPool}, and the next attempt's
 * accesses get them: its reads and writes see its own keys' bytes, never the previous attempt's.
 */
class BufferReuseTest extends OnRowsNode {

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldLendACommittedAttemptsBuffersToTheNextWithoutItsBytes(final String protocol) throws Exception {
        final long first = node.valueOf(1);
        final long second = node.valueOf(2);
        final List<Object> seen = new ArrayList<>();
        node.on(rt -> {
            return key1Written(rt, protocol, first + 1_000_001, true).compose(t1 -> {
                final Access a1 = t1.access();
                final UnsafeBuffer[] t1Buffers = {t1.image(), t1.newValue()};
                seen.add(a1.image == null && a1.newValue == null); // given back
                final OneSidedTxn t2 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
                return t2.read(T, 2).compose(v2 -> {
                    seen.add(v2.getLong(0)); // key 2's value, not key 1's bytes
                    final Access a2 = t2.reads.accesses().get(0);
                    seen.add(a2.image == t1Buffers[0]); // the same buffer, lent again
                    seen.add(a2.image.getLong(ObjectLayout.VALUE_OFFSET));
                    t2.write(T, 2, value(v2.getLong(0) + 7), 0, 8);
                    seen.add(a2.newValue == t1Buffers[1]);
                    seen.add(a2.newValue.getLong(0));
                    return t2.commit();
                });
            });
        });
        assertThat(seen.get(0)).as("t1's accesses gave their buffers back").isEqualTo(true);
        assertThat(seen.get(1)).isEqualTo(second);
        assertThat(seen.get(2)).as("t2's image is t1's, reused").isEqualTo(true);
        assertThat(seen.get(3)).isEqualTo(second);
        assertThat(seen.get(4)).as("t2's new value buffer is t1's, reused").isEqualTo(true);
        assertThat(seen.get(5)).isEqualTo(second + 7);
        assertThat(node.valueOf(1)).isEqualTo(first + 1_000_001);
        assertThat(node.valueOf(2)).isEqualTo(second + 7);
        assertThat(second).isNotEqualTo(first + 1_000_001);
    }

    /**
     * Review finding 1 (a): a commit with a read still in flight gives nothing back ({@link ReadSet#recycle}'s guard):
     * the late read lands in the access's own image, never in a buffer another attempt was lent. The read in flight
     * is a real READ into t1's image, held back by a promise (un-awaited reads race the commit's verbs otherwise).
     */
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldGiveNothingBackWhileAReadIsInFlight(final String protocol) throws Exception {
        final long first = node.valueOf(1);
        final long second = node.valueOf(2);
        final List<Object> seen = new ArrayList<>();
        node.on(rt -> {
            final BufferPool pool = BufferPool.of(rt);
            final OneSidedTxn t1 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
            final Promise<Void> hold = Promise.promise();
            final UnsafeBuffer[] t1Image = new UnsafeBuffer[1];
            final List<Future<Access>> late = new ArrayList<>(1);
            return t1.read(T, 1).compose(v -> {
                final Access a1 = t1.reads.accesses().get(0);
                t1Image[0] = a1.image;
                // un-awaited, counted in flight from now: READs key 1 into a1.image once released
                late.add(t1.reads.inFlight(hold.future().compose(x -> t1.reads.readImage(a1))));
                t1.write(T, 1, value(first + 1_000_001), 0, 8);
                return t1.commit();
            }).compose(c -> node.vertx.timer(1)).compose(x -> { // past the commit's last listener
                final Access a1 = t1.reads.accesses().get(0);
                final int slotBytes = t1Image[0].capacity();
                seen.add(pool.spare(slotBytes)); // 0: kept, the read may still land in it
                seen.add(a1.image == t1Image[0] && a1.pooledImage == t1Image[0]);
                seen.add(a1.newValue != null && a1.pooledNewValue != null);
                final OneSidedTxn t2 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
                return t2.read(T, 2).compose(v2 -> {
                    final Access a2 = t2.reads.accesses().get(0);
                    seen.add(a2.image != t1Image[0]); // a buffer of its own
                    hold.complete(); // the late READ goes now
                    return late.get(0);
                }).compose(a -> {
                    final Access a2 = t2.reads.accesses().get(0);
                    seen.add(a1.image == t1Image[0]);
                    seen.add(t1Image[0].getLong(ObjectLayout.VALUE_OFFSET)); // key 1's committed bytes
                    seen.add(a2.image.getLong(ObjectLayout.VALUE_OFFSET)); // still key 2's
                    seen.add(t1.reads.recycle()); // nothing in flight any more: now it may
                    seen.add(pool.spare(slotBytes));
                    return t2.abort();
                });
            });
        });
        assertThat(seen.get(0)).as("nothing given back with a read in flight").isEqualTo(0);
        assertThat(seen.get(1)).as("the access still holds its image").isEqualTo(true);
        assertThat(seen.get(2)).as("and its new value").isEqualTo(true);
        assertThat(seen.get(3)).as("t2 is not lent t1's image").isEqualTo(true);
        assertThat(seen.get(4)).isEqualTo(true);
        assertThat(seen.get(5)).as("the late read landed in t1's image").isEqualTo(first + 1_000_001);
        assertThat(seen.get(6)).as("t2's image untouched by it").isEqualTo(second);
        assertThat(seen.get(7)).isEqualTo(true);
        assertThat(seen.get(8)).isEqualTo(1);
    }

    /** Review finding 1 (b): an aborted attempt gives nothing back (its late releases may still use its buffers). */
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldGiveNothingBackFromAnAbortedAttempt(final String protocol) throws Exception {
        final long first = node.valueOf(1);
        final List<Object> seen = new ArrayList<>();
        node.on(rt -> {
            final BufferPool pool = BufferPool.of(rt);
            return key1Written(rt, protocol, first + 5, false).compose(t1 -> {
                final Access a1 = t1.access();
                seen.add(pool.spare(t1.image().capacity()));
                seen.add(pool.spare(t1.newValue().capacity()));
                seen.add(a1.image == t1.image() && a1.newValue == t1.newValue());
                return Future.succeededFuture();
            });
        });
        assertThat(seen.get(0)).as("the aborted attempt's image is not lent again").isEqualTo(0);
        assertThat(seen.get(1)).as("nor its new value").isEqualTo(0);
        assertThat(seen.get(2)).isEqualTo(true);
        assertThat(node.valueOf(1)).isEqualTo(first);
    }

    /**
     * Review finding 2: a committed attempt's write-back words (version, length, flags) go back to the pool, are lent
     * again zeroed, and the next attempt's write-back writes its own words through them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldLendTheWriteBackWordsAgainZeroed(final String protocol) throws Exception {
        final long second = node.valueOf(2);
        final List<Object> seen = new ArrayList<>();
        node.on(rt -> {
            final BufferPool pool = BufferPool.of(rt);
            final int before = pool.spare(16);
            final OneSidedTxn t1 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
            final UnsafeBuffer[] words = new UnsafeBuffer[2];
            return t1.read(T, 1).compose(v -> {
                t1.write(T, 1, value(v.getLong(0) + 3), 0, 8);
                return t1.commit();
            }).map(c -> { // the commit's listener runs before the buffers go back
                final Access a1 = t1.reads.accesses().get(0);
                words[0] = a1.writeWords;
                seen.add(a1.writeWords != null && a1.writeWords.capacity() == 16);
                seen.add(a1.writeWords.getLong(0) == a1.installedVersion && a1.installedVersion != 0);
                seen.add(a1.writeWords.getInt(8)); // the length word: unchanged (8 bytes as before), so not written
                return c;
            }).compose(c -> node.vertx.timer(1)).compose(x -> {
                final Access a1 = t1.reads.accesses().get(0);
                seen.add(a1.writeWords == null);
                seen.add(pool.spare(16) - before);
                final UnsafeBuffer w = pool.take(16);
                seen.add(w == words[0]);
                boolean zero = true;
                for (int i = 0; i < 16; i++) {
                    zero &= w.getByte(i) == 0;
                }
                seen.add(zero);
                pool.give(w);
                final OneSidedTxn t2 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
                return t2.read(T, 2).compose(v2 -> {
                    t2.write(T, 2, value(v2.getLong(0) + 9), 0, 8);
                    return t2.commit();
                }).map(c -> {
                    final Access a2 = t2.reads.accesses().get(0);
                    seen.add(a2.writeWords == words[0]);
                    seen.add(a2.writeWords.getLong(0) == a2.installedVersion);
                    return c;
                });
            });
        });
        assertThat(seen.get(0)).isEqualTo(true);
        assertThat(seen.get(1)).as("words hold the installed version").isEqualTo(true);
        assertThat(seen.get(2)).isEqualTo(0);
        assertThat(seen.get(3)).as("the access let go of its words").isEqualTo(true);
        assertThat(seen.get(4)).as("one 16-byte buffer back in the pool").isEqualTo(1);
        assertThat(seen.get(5)).as("the same buffer lent again").isEqualTo(true);
        assertThat(seen.get(6)).as("zeroed").isEqualTo(true);
        assertThat(seen.get(7)).as("t2's write-back uses t1's words").isEqualTo(true);
        assertThat(seen.get(8)).isEqualTo(true);
        assertThat(node.valueOf(2)).isEqualTo(second + 9);
    }

    /** Review finding 3: a write after the transaction finished is refused, as insert is, and changes nothing. */
    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldRefuseAWriteAfterTheCommit(final String protocol) throws Exception {
        final long first = node.valueOf(1);
        final List<Object> seen = new ArrayList<>();
        node.on(rt -> {
            final BufferPool pool = BufferPool.of(rt);
            return key1Written(rt, protocol, first + 1, true).compose(t1 -> {
                final Access a1 = t1.access();
                final int spare = pool.spare(t1.newValue().capacity());
                try {
                    t1.txn().write(T, 1, value(first + 2), 0, 8);
                    seen.add("no error");
                } catch (final IllegalStateException e) {
                    seen.add(e.getMessage());
                }
                seen.add(a1.newValue == null && a1.pooledNewValue == null);
                seen.add(pool.spare(t1.newValue().capacity()) - spare);
                return Future.succeededFuture();
            });
        });
        assertThat((String) seen.get(0)).contains("is over");
        assertThat(seen.get(1)).as("no new value taken").isEqualTo(true);
        assertThat(seen.get(2)).as("no buffer taken from the pool").isEqualTo(0);
        assertThat(node.valueOf(1)).isEqualTo(first + 1);
    }

    /** An attempt that wrote key 1 and ended, with its access's image and new-value buffers as they were before. */
    private record Ended(OneSidedTxn txn, UnsafeBuffer image, UnsafeBuffer newValue) {
        Access access() {
            return txn.reads.accesses().get(0);
        }
    }

    /**
     * An attempt of {@code protocol} that reads key 1, writes {@code newValue} there and commits ({@code commit}) or
     * aborts, then a timer past its outcome's last listener (when a committed attempt's buffers go back).
     */
    private Future<Ended> key1Written(final io.scythe.txn.TxnRuntime rt, final String protocol, final long newValue,
                                      final boolean commit) {
        final OneSidedTxn t1 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
        final UnsafeBuffer[] buffers = new UnsafeBuffer[2];
        return t1.read(T, 1).compose(v -> {
            t1.write(T, 1, value(newValue), 0, 8);
            final Access a1 = t1.reads.accesses().get(0);
            buffers[0] = a1.image;
            buffers[1] = a1.newValue;
            return commit ? t1.commit().<Void>mapEmpty() : t1.abort();
        }).compose(c -> node.vertx.timer(1)).map(x -> new Ended(t1, buffers[0], buffers[1]));
    }
}
