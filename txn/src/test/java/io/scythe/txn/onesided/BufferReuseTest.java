package io.scythe.txn.onesided;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.Txn;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A committed attempt's image and new-value buffers go back to the loop's {@link BufferPool}, and the next attempt's
 * accesses get them: its reads and writes see its own keys' bytes, never the previous attempt's.
 */
class BufferReuseTest {
    private static final String T = "rows";
    private OneMemoryNode node;

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode(T, 64);
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

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
            final OneSidedTxn t1 = (OneSidedTxn) ProtocolRegistry.protocol(protocol).begin(rt, false);
            final UnsafeBuffer[] t1Buffers = new UnsafeBuffer[2];
            return t1.read(T, 1).compose(v -> {
                t1.write(T, 1, value(first + 1_000_001), 0, 8);
                final Access a1 = t1.reads.accesses().get(0);
                t1Buffers[0] = a1.image;
                t1Buffers[1] = a1.newValue;
                return t1.commit();
            }).compose(c -> node.vertx.timer(1)).compose(x -> { // past the commit's last listener
                final Access a1 = t1.reads.accesses().get(0);
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
}
