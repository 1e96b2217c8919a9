package io.scythe.txn.onesided;

import io.scythe.txn.Access;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The loop's spare image and new-value buffers ({@link BufferPool}): a buffer lent again holds none of the bytes the
 * attempt that had it left (all zero, as a new array), and only buffers the pool lent and the access still holds go
 * back.
 */
class BufferPoolTest {
    @Test
    void shouldLendARecycledBufferZeroed() {
        final BufferPool pool = new BufferPool();
        final Access a = new Access("t", 1, null);
        a.image = pool.take(64);
        a.pooledImage = a.image;
        a.newValue = pool.take(40);
        a.pooledNewValue = a.newValue;
        for (int i = 0; i < 64; i++) {
            a.image.putByte(i, (byte) (i + 1));
        }
        for (int i = 0; i < 40; i++) {
            a.newValue.putByte(i, (byte) 0x7f);
        }
        final UnsafeBuffer image = a.image;
        final UnsafeBuffer value = a.newValue;

        pool.recycle(List.of(a));

        assertThat(a.image).isNull(); // a late use fails loudly instead of reading the next attempt's bytes
        assertThat(a.newValue).isNull();
        assertThat(a.pooledImage).isNull();
        assertThat(pool.spare(64)).isEqualTo(1);
        assertThat(pool.spare(40)).isEqualTo(1);

        final UnsafeBuffer again = pool.take(64);
        assertThat(again).isSameAs(image); // reused, not a new array
        assertThat(again.capacity()).isEqualTo(64);
        for (int i = 0; i < 64; i++) {
            assertThat(again.getByte(i)).as("byte %d", i).isZero();
        }
        final UnsafeBuffer valueAgain = pool.take(40);
        assertThat(valueAgain).isSameAs(value);
        for (int i = 0; i < 40; i++) {
            assertThat(valueAgain.getByte(i)).as("byte %d", i).isZero();
        }
        assertThat(pool.take(64)).isNotSameAs(image); // none spare: a new one
    }

    @Test
    void shouldKeepOutBuffersAProtocolReplacedOrDidNotTakeFromIt() {
        final BufferPool pool = new BufferPool();
        final Access replaced = new Access("t", 1, null);
        replaced.image = pool.take(32);
        replaced.pooledImage = replaced.image;
        final UnsafeBuffer foreign = new UnsafeBuffer(new byte[32]);
        replaced.image = foreign; // e.g. a protocol's own bigger image
        final Access own = new Access("t", 2, null);
        own.image = new UnsafeBuffer(new byte[32]); // not lent by the pool

        pool.recycle(List.of(replaced, own));

        assertThat(pool.spare(32)).isZero();
        assertThat(replaced.image).isSameAs(foreign);
        assertThat(own.image).isNotNull();
    }

    @Test
    void shouldKeepAtMostItsBoundPerCapacity() {
        final BufferPool pool = new BufferPool();
        for (int i = 0; i < BufferPool.MAX_SPARE_PER_CAPACITY + 3; i++) {
            pool.give(new UnsafeBuffer(new byte[16]));
        }
        assertThat(pool.spare(16)).isEqualTo(BufferPool.MAX_SPARE_PER_CAPACITY);
    }
}
