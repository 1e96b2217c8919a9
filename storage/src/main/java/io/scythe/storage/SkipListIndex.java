package io.scythe.storage;

import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;

import static io.scythe.storage.SkipListLayout.ADDRESS_OFFSET;
import static io.scythe.storage.SkipListLayout.HEAD_OFFSET;
import static io.scythe.storage.SkipListLayout.KEY_OFFSET;
import static io.scythe.storage.SkipListLayout.LEVEL_OFFSET;
import static io.scythe.storage.SkipListLayout.MAX_LEVEL;

/**
 * The memory node's side of a skip-list index ({@link SkipListLayout}). Lookups are lock-free; inserts and removals
 * must be serialised by the caller. Levels come from a seeded generator, so a load is reproducible.
 */
public final class SkipListIndex implements Index {
    private final AtomicBuffer memory;
    private final SplittableRandom random;
    private final int[] predecessors = new int[MAX_LEVEL];
    private int allocated;
    private long size;

    public SkipListIndex(final AtomicBuffer memory, final long seed) {
        if (memory.capacity() < SkipListLayout.nodeBytes(MAX_LEVEL)) {
            throw new IllegalArgumentException("skip-list region too small: " + memory.capacity() + " bytes");
        }
        this.memory = memory;
        this.random = new SplittableRandom(seed);
        memory.putLong(HEAD_OFFSET + KEY_OFFSET, Long.MIN_VALUE);
        memory.putLong(HEAD_OFFSET + ADDRESS_OFFSET, HashIndexLayout.DELETED);
        memory.putInt(HEAD_OFFSET + LEVEL_OFFSET, MAX_LEVEL);
        this.allocated = SkipListLayout.nodeBytes(MAX_LEVEL);
    }

    @Override
    public long lookup(final long key) {
        final int node = findGreaterOrEqual(key, null);
        if (node == 0) {
            return 0;
        }
        final long address = memory.getLongAcquire(node + ADDRESS_OFFSET);
        return memory.getLong(node + KEY_OFFSET) == key && HashIndexLayout.live(address) ? address : 0;
    }

    /**
     * Offset of the first node whose key is {@code >= key} (0 if none), recording the last node before it on each
     * level into {@code preds} when given.
     */
    private int findGreaterOrEqual(final long key, final int[] preds) {
        int node = HEAD_OFFSET;
        for (int level = MAX_LEVEL - 1; level >= 0; level--) {
            while (true) {
                final int next = (int) memory.getLongAcquire(node + SkipListLayout.nextOffset(level));
                if (next == 0 || memory.getLong(next + KEY_OFFSET) >= key) {
                    break;
                }
                node = next;
            }
            if (preds != null) {
                preds[level] = node;
            }
        }
        return (int) memory.getLongAcquire(node + SkipListLayout.nextOffset(0));
    }

    @Override
    public int insert(final long key, final long address) {
        if (!HashIndexLayout.live(address)) {
            throw new IllegalArgumentException("object address " + address + " is reserved");
        }
        final int found = findGreaterOrEqual(key, predecessors);
        if (found != 0 && memory.getLong(found + KEY_OFFSET) == key) {
            if (HashIndexLayout.live(memory.getLong(found + ADDRESS_OFFSET))) {
                return DUPLICATE;
            }
            memory.putLongRelease(found + ADDRESS_OFFSET, address); // revive the logically deleted node
            size++;
            return OK;
        }
        final int level = randomLevel();
        final int bytes = SkipListLayout.nodeBytes(level);
        if ((long) allocated + bytes > memory.capacity()) {
            return FULL;
        }
        final int node = allocated;
        allocated += bytes;
        memory.putLong(node + KEY_OFFSET, key);
        memory.putLong(node + ADDRESS_OFFSET, address);
        memory.putInt(node + LEVEL_OFFSET, level);
        for (int i = 0; i < level; i++) {
            memory.putLong(node + SkipListLayout.nextOffset(i),
                memory.getLong(predecessors[i] + SkipListLayout.nextOffset(i)));
        }
        VarHandle.releaseFence(); // the node is whole before anyone can reach it
        for (int i = 0; i < level; i++) {
            memory.putLongRelease(predecessors[i] + SkipListLayout.nextOffset(i), node);
        }
        size++;
        return OK;
    }

    private int randomLevel() {
        int level = 1;
        while (level < MAX_LEVEL && (random.nextInt() & 3) == 0) {
            level++;
        }
        return level;
    }

    @Override
    public boolean remove(final long key) {
        final int found = findGreaterOrEqual(key, null);
        if (found == 0 || memory.getLong(found + KEY_OFFSET) != key
            || !HashIndexLayout.live(memory.getLong(found + ADDRESS_OFFSET))) {
            return false;
        }
        memory.putLongRelease(found + ADDRESS_OFFSET, HashIndexLayout.DELETED);
        size--;
        return true;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void forEach(final EntryVisitor visitor) {
        int node = (int) memory.getLongAcquire(HEAD_OFFSET + SkipListLayout.nextOffset(0));
        while (node != 0) {
            final long address = memory.getLongAcquire(node + ADDRESS_OFFSET);
            if (HashIndexLayout.live(address)) {
                visitor.entry(memory.getLong(node + KEY_OFFSET), address);
            }
            node = (int) memory.getLongAcquire(node + SkipListLayout.nextOffset(0));
        }
    }

    @Override
    public long bytes() {
        return allocated;
    }

    /** Keys in order from {@code fromKey} (inclusive), at most {@code limit}; for range scans on the MN. */
    public int scan(final long fromKey, final long[] keys, final long[] addresses, final int limit) {
        int node = findGreaterOrEqual(fromKey, null);
        int n = 0;
        while (node != 0 && n < limit) {
            final long address = memory.getLongAcquire(node + ADDRESS_OFFSET);
            if (HashIndexLayout.live(address)) {
                keys[n] = memory.getLong(node + KEY_OFFSET);
                addresses[n] = address;
                n++;
            }
            node = (int) memory.getLongAcquire(node + SkipListLayout.nextOffset(0));
        }
        return n;
    }
}
