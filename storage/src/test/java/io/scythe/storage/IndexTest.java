package io.scythe.storage;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class IndexTest {
    private static UnsafeBuffer memory(final long bytes) {
        return new UnsafeBuffer(BufferUtil.allocateDirectAligned((int) bytes, 64));
    }

    private static long pointerFor(final long key) {
        return ObjectLayout.pointer(0x1000_0000L + key * 64, (int) (key & 0xffff) | 1);
    }

    @Test
    void shouldFindEveryInsertedKeyInTheHashIndexAndAgreeWithAOneSidedBucketSearch() {
        final int records = 50_000;
        final int buckets = HashIndexLayout.bucketsFor(records, HashIndexLayout.DEFAULT_SLOTS_PER_RECORD);
        final UnsafeBuffer mem = memory((long) buckets * HashIndexLayout.BUCKET_BYTES);
        final HashIndex index = new HashIndex(mem, buckets);
        final SplittableRandom random = new SplittableRandom(7);
        final long[] keys = new long[records];
        for (int i = 0; i < records; i++) {
            keys[i] = random.nextLong();
            assertThat(index.insert(keys[i], pointerFor(i))).isEqualTo(Index.OK);
        }
        assertThat(index.insert(keys[3], pointerFor(99))).isEqualTo(Index.DUPLICATE);
        for (int i = 0; i < records; i++) {
            assertThat(index.lookup(keys[i])).isEqualTo(pointerFor(i));
            assertThat(oneSided(mem, buckets, keys[i])).isEqualTo(pointerFor(i));
        }
        assertThat(index.lookup(12345L)).isZero();
        assertThat(oneSided(mem, buckets, 12345L)).isZero();
        assertThat(index.remove(keys[5])).isTrue();
        assertThat(index.remove(keys[5])).isFalse();
        assertThat(index.lookup(keys[5])).isZero();
        assertThat(oneSided(mem, buckets, keys[5])).isZero();
        assertThat(index.insert(keys[5], pointerFor(5))).isEqualTo(Index.OK);
        assertThat(index.size()).isEqualTo(records);
    }

    /** What a compute node does: copy a bucket (as a READ would) and search the copy; next bucket if needed. */
    private static long oneSided(final UnsafeBuffer mem, final int buckets, final long key) {
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[HashIndexLayout.BUCKET_BYTES]);
        final int home = HashIndexLayout.homeBucket(key, buckets);
        for (int probe = 0; probe < HashIndexLayout.MAX_PROBE_BUCKETS; probe++) {
            copy.putBytes(0, mem, (int) HashIndexLayout.bucketOffset(home, probe, buckets),
                HashIndexLayout.BUCKET_BYTES);
            final long found = HashIndex.search(copy, 0, key);
            if (found != HashIndex.NOT_FOUND) {
                return found;
            }
        }
        return 0;
    }

    @Test
    void shouldReportFullWhenAProbeWindowHasNoRoom() {
        final int buckets = HashIndexLayout.MAX_PROBE_BUCKETS;
        final HashIndex index = new HashIndex(memory((long) buckets * HashIndexLayout.BUCKET_BYTES), buckets);
        int inserted = 0;
        int status = Index.OK;
        for (long key = 1; status == Index.OK; key++) {
            status = index.insert(key, pointerFor(key));
            if (status == Index.OK) {
                inserted++;
            }
        }
        assertThat(status).isEqualTo(Index.FULL);
        assertThat(inserted).isEqualTo(buckets * HashIndexLayout.SLOTS_PER_BUCKET);
    }

    @Test
    void shouldKeepTheSkipListOrderedAndFindEveryKey() {
        final int records = 20_000;
        final SkipListIndex index = new SkipListIndex(memory(SkipListLayout.regionBytesFor(records)), 1);
        final SplittableRandom random = new SplittableRandom(3);
        final long[] keys = new long[records];
        for (int i = 0; i < records; i++) {
            keys[i] = random.nextLong(1, Long.MAX_VALUE);
            assertThat(index.insert(keys[i], pointerFor(i))).isEqualTo(Index.OK);
        }
        for (int i = 0; i < records; i++) {
            assertThat(index.lookup(keys[i])).isEqualTo(pointerFor(i));
        }
        assertThat(index.insert(keys[0], pointerFor(1))).isEqualTo(Index.DUPLICATE);
        final long[] scanned = new long[records];
        final long[] addresses = new long[records];
        assertThat(index.scan(Long.MIN_VALUE + 1, scanned, addresses, records)).isEqualTo(records);
        for (int i = 1; i < records; i++) {
            assertThat(scanned[i]).isGreaterThan(scanned[i - 1]);
        }
        assertThat(index.remove(keys[9])).isTrue();
        assertThat(index.lookup(keys[9])).isZero();
        assertThat(index.insert(keys[9], pointerFor(42))).isEqualTo(Index.OK);
        assertThat(index.lookup(keys[9])).isEqualTo(pointerFor(42));
        assertThat((double) index.bytes() / records).isLessThan(SkipListLayout.BYTES_PER_KEY * 1.25);
    }

    @Test
    void shouldNeverShowALockFreeReaderAWrongAddressWhileAWriterInserts() throws Exception {
        for (final IndexKind kind : IndexKind.values()) {
            final int records = 100_000;
            final int buckets = HashIndexLayout.bucketsFor(records, HashIndexLayout.DEFAULT_SLOTS_PER_RECORD);
            final Index index = kind == IndexKind.HASH
                ? new HashIndex(memory((long) buckets * HashIndexLayout.BUCKET_BYTES), buckets)
                : new SkipListIndex(memory(SkipListLayout.regionBytesFor(records)), 5);
            final AtomicLong published = new AtomicLong();
            final AtomicLong wrong = new AtomicLong();
            final Thread reader = new Thread(() -> {
                final SplittableRandom random = new SplittableRandom(11);
                while (published.get() < records) {
                    final long limit = published.get();
                    if (limit == 0) {
                        continue;
                    }
                    final long key = random.nextLong(limit) + 1;
                    final long found = index.lookup(key * 7919);
                    if (found != pointerFor(key)) {
                        wrong.incrementAndGet();
                    }
                }
            });
            reader.start();
            for (long key = 1; key <= records; key++) {
                index.insert(key * 7919, pointerFor(key));
                published.set(key);
            }
            reader.join();
            assertThat(wrong.get()).as(kind.name()).isZero();
        }
    }
}
