package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * A concurrent B-link tree (Lehman and Yao) whose nodes are global cache lines (SELCC §6.3: index nodes aligned to
 * GCLs, mutexes replaced by SELCC latches), on either {@link Gcl} ({@link SelccGcl}: cached internal nodes cost no
 * verb; {@link SelGcl}: every latch is a round trip). Keys are longs below {@link Long#MAX_VALUE}; values have a fixed
 * size.
 *
 * <p><b>Node layout</b> (a line's data): {@code level} (u32, 0 = leaf), {@code count} (u32), the high key (u64,
 * {@link Long#MAX_VALUE} = +inf), the right link (a {@link GlobalPointer}, {@link GlobalPointer#NONE} at the right
 * end), then {@code count} sorted entries: a leaf's (key, value), an internal node's (separator, child) where the
 * child holds the keys from its separator up to the next one (the leftmost node of a level has
 * {@link Long#MIN_VALUE} as its first separator). The <b>meta line</b> (line 1 of memory node 0) holds the root's
 * pointer and level.
 *
 * <p><b>Latching.</b> Descents couple Shared latches (the child taken before the parent is let go) from the root
 * down (the root as the loop last read it from the meta line: a former root is the leftmost node of its level, so
 * right moves still reach every key); the target node (a leaf for an insert, update or delete; an internal node for a separator) is latched
 * Exclusive. A key at or past a node's high key moves right along the right link (coupled the same way), so a
 * descent that raced a split finds the keys that moved. A full node splits: the upper half goes to a freshly
 * allocated line latched Exclusive, the node keeps the lower half, its high key becomes the new node's first key and
 * its right link the new node; both are unlatched, then the separator is inserted one level up by a new descent (or
 * a new root is made under the meta line's Exclusive latch). At most one pre-existing node is held Exclusive at a
 * time, latches are taken top-down and left to right: no deadlock, so every latch may wait.
 *
 * <p><b>Deletes and node merges</b> (issue 21). A delete removes the key from its leaf; nodes are never merged or
 * freed, an emptied leaf stays in place with its high key and right link. SELCC's paper is silent on it (§6.3 only
 * aligns nodes to GCLs and swaps mutexes for SELCC latches), and Lehman and Yao's tree, which this one is, has no
 * delete protocol: merging needs Lanin and Shasha's drain (a freed node's line must not be reused while any descent
 * may still hold a pointer to it, i.e. epoch-based reclamation across compute nodes, and a dead node's pointers too)
 * or Sagiv's compression process. Sherman and most disaggregated B-link trees leave underfull nodes likewise. So an
 * emptied leaf is crossed by descents (its range is unchanged) and by scans (zero entries, then its right link), and a
 * later insert into its range fills it again. Cost: space of emptied leaves, and a scan's latch (SEL: a round trip)
 * for each one it crosses. {@code BLinkTreeSimTest#shouldKeepEveryInvariantAndScanAcrossLeavesDeletesEmptied}.
 */
public final class BLinkTree {
    static final int LEVEL = 0;
    static final int COUNT = 4;
    static final int HIGH = 8;
    static final int RIGHT = 16;
    static final int ENTRIES = 24;
    /** The meta line's words. */
    static final int META_ROOT = 0;
    static final int META_LEVEL = 8;
    /** The meta line: line 1 of memory node 0 (line 0 is the allocator's header). */
    public static final long META_LINE = 1;
    /** The first line of every memory node the bulk load places nodes in. */
    public static final long FIRST_NODE_LINE = 2;

    private final Gcl gcl;
    private final long meta;
    private final int valueBytes;
    private final int leafEntry;
    private final int leafCapacity;
    private final int innerCapacity;
    /**
     * The root as this loop last read it from the meta line, and its level. A root that is no longer the root is the
     * leftmost node of its level (a split keeps the lower half in place), so a descent from it still reaches every key
     * by right moves: the meta line is read again only when a level above it is needed.
     */
    private long root = GlobalPointer.NONE;
    private int rootLevel = -1;
    /** Separators a committed transaction's splits failed to post (right links keep every key reachable). */
    private long unpostedSeparators;
    /** Splits committed transactions made (fresh leaves), and their separators posted. */
    private long commitSplits;
    private long commitSeparatorsPosted;
    /** Whether leaves carry {@link OrderedTxn}'s timestamps, and where ({@code rts}, then {@code wts}). */
    private final boolean timestamped;
    private final int rtsAt;
    /** A timestamped leaf's {@code rts} and {@code wts}: the last bytes of its data. */
    public static final int TIMESTAMP_BYTES = 16;

    /** The bytes at the end of a leaf that its entries leave free: {@link #TIMESTAMP_BYTES} when timestamped. */
    public static int reserve(final boolean timestamped) {
        return timestamped ? TIMESTAMP_BYTES : 0;
    }

    public BLinkTree(final Gcl gcl, final int valueBytes) {
        this(gcl, valueBytes, false);
    }

    /**
     * A tree whose leaves carry timestamp-ordering words when {@code timestamped} ({@link OrderedTxn}: a leaf's
     * {@code rts} and {@code wts} in its last {@link #TIMESTAMP_BYTES} data bytes, so its entries' room is that much
     * smaller; bulk-load it with the same reserve). A timestamped tree runs {@link OrderedTxn}s only: its single
     * operations' splits would not carry the words over.
     */
    public BLinkTree(final Gcl gcl, final int valueBytes, final boolean timestamped) {
        this.gcl = gcl;
        this.meta = gcl.region().pointer(0, META_LINE);
        this.valueBytes = valueBytes;
        this.leafEntry = leafEntryBytes(valueBytes);
        this.timestamped = timestamped;
        this.rtsAt = gcl.dataBytes() - TIMESTAMP_BYTES;
        this.leafCapacity = (gcl.dataBytes() - ENTRIES - reserve(timestamped)) / leafEntry;
        this.innerCapacity = (gcl.dataBytes() - ENTRIES) / 16;
        checkRoom(gcl.dataBytes(), valueBytes, timestamped);
    }

    /**
     * Refuses lines of {@code dataBytes} data bytes that hold fewer than 3 leaf entries of {@code valueBytes}-byte
     * values (after a timestamped leaf's {@link #TIMESTAMP_BYTES}) or fewer than 3 separators: what the constructor
     * checks, callable before a run loads anything (issue 21: a {@code selcc-to} run on lines too small for its
     * timestamps started no transaction and ended "not quiescent"). The message names the least that fits.
     */
    public static void checkRoom(final int dataBytes, final int valueBytes, final boolean timestamped) {
        final int leafEntry = leafEntryBytes(valueBytes);
        final int leaf = (dataBytes - ENTRIES - reserve(timestamped)) / leafEntry;
        final int inner = (dataBytes - ENTRIES) / 16;
        if (leaf < 3 || inner < 3) {
            throw new IllegalArgumentException("lines of " + dataBytes + " data bytes hold " + Math.max(0, leaf)
                + " leaf entries of " + valueBytes + "-byte values" + (timestamped ? " (after " + TIMESTAMP_BYTES
                + " bytes of TO timestamps)" : "") + " and " + Math.max(0, inner) + " separators: a B-link node "
                + "needs at least 3 of each, so at least " + minDataBytes(valueBytes, timestamped) + " data bytes");
        }
    }

    /** The fewest data bytes a line needs for a tree of {@code valueBytes}-byte values ({@link #checkRoom}). */
    public static int minDataBytes(final int valueBytes, final boolean timestamped) {
        return ENTRIES + Math.max(3 * leafEntryBytes(valueBytes) + reserve(timestamped), 3 * 16);
    }

    static int leafEntryBytes(final int valueBytes) {
        if (valueBytes < 0) {
            throw new IllegalArgumentException("valueBytes=" + valueBytes);
        }
        return 8 + ((valueBytes + 7) & ~7);
    }

    /**
     * Separators of committed transactions' splits whose post failed: the commit was visible already, so it stays
     * committed; the split node stays reachable by its left sibling's right link (a move right per lookup).
     */
    public long unpostedSeparators() {
        return unpostedSeparators;
    }

    /** Fresh nodes committed transactions' splits made (a node that overflowed into n lines counts n - 1). */
    public long commitSplits() {
        return commitSplits;
    }

    /** Separators of committed transactions' splits posted (a root split by them included). */
    public long commitSeparatorsPosted() {
        return commitSeparatorsPosted;
    }

    /** Posts a commit's separators one after the other, detached from it: a failure is counted, not the commit's. */
    private void postDetached(final List<long[]> separators) {
        Future<Void> posted = Future.succeededFuture();
        for (final long[] s : separators) {
            posted = posted.compose(x -> insertSeparator(1, s[0], s[1], s[2]).onSuccess(y -> commitSeparatorsPosted++));
        }
        posted.onFailure(e -> unpostedSeparators++);
    }

    public int leafCapacity() {
        return leafCapacity;
    }

    public int innerCapacity() {
        return innerCapacity;
    }

    private static void checkKey(final long key) {
        if (key == Long.MAX_VALUE) {
            throw new IllegalArgumentException("key " + key + ": Long.MAX_VALUE is the tree's +inf high key");
        }
    }

    // ------------------------------------------------------------------------------------------ operations

    /**
     * A single operation's linearization point: called with its answer while it holds its leaf's latch (Exclusive
     * for a write, whose leaf copy is then written; Shared for a lookup, whose value was copied out), before any write
     * through or release. A checker notes the operation there (the crash explorer's ledger, issue 21).
     */
    @FunctionalInterface
    public interface Point {
        void at(boolean answer);
    }

    private static void at(final Point point, final boolean answer) {
        if (point != null) {
            point.at(answer);
        }
    }

    /** Copies the value of {@code key} into {@code out}: whether it was there. */
    public Future<Boolean> lookup(final long key, final MutableDirectBuffer out) {
        return lookup(key, out, null);
    }

    /** {@link #lookup(long, MutableDirectBuffer)} with its {@link Point} (or null). */
    public Future<Boolean> lookup(final long key, final MutableDirectBuffer out, final Point point) {
        checkKey(key);
        return descend(key, 0, false).map(h -> {
            final int i = search(h.data(), key, leafEntry);
            final boolean found = i >= 0;
            if (found && out != null) {
                out.putBytes(0, h.data(), ENTRIES + i * leafEntry + 8, valueBytes);
            }
            at(point, found);
            gcl.unlock(h);
            return found;
        });
    }

    /** Inserts or replaces: whether the key is new. */
    public Future<Boolean> insert(final long key, final DirectBuffer value) {
        return insert(key, value, null);
    }

    /** {@link #insert(long, DirectBuffer)} with its {@link Point} (or null). */
    public Future<Boolean> insert(final long key, final DirectBuffer value, final Point point) {
        notTimestamped("single inserts");
        checkKey(key);
        checkValue(value);
        return descend(key, 0, true).compose(h -> {
            final int i = search(h.data(), key, leafEntry);
            at(point, i < 0);
            if (i >= 0) {
                putValue(h, i, value);
                return gcl.unlockWritten(h).map(false);
            }
            return insertAt(h, -i - 1, key, value, 0L).map(true);
        });
    }

    /** Replaces the value of an existing key: whether it existed. */
    public Future<Boolean> update(final long key, final DirectBuffer value) {
        return update(key, value, null);
    }

    /** {@link #update(long, DirectBuffer)} with its {@link Point} (or null). */
    public Future<Boolean> update(final long key, final DirectBuffer value, final Point point) {
        notTimestamped("single updates");
        checkKey(key);
        checkValue(value);
        return descend(key, 0, true).compose(h -> {
            final int i = search(h.data(), key, leafEntry);
            if (i >= 0) {
                putValue(h, i, value);
            }
            at(point, i >= 0);
            return gcl.unlockWritten(h).map(i >= 0);
        });
    }

    /** Removes {@code key}: whether it was there. */
    public Future<Boolean> delete(final long key) {
        return delete(key, null);
    }

    /** {@link #delete(long)} with its {@link Point} (or null). */
    public Future<Boolean> delete(final long key, final Point point) {
        notTimestamped("single deletes");
        checkKey(key);
        return descend(key, 0, true).compose(h -> {
            final int i = search(h.data(), key, leafEntry);
            if (i >= 0) {
                final UnsafeBuffer d = h.data();
                final int count = d.getInt(COUNT);
                final int at = ENTRIES + i * leafEntry;
                d.putBytes(at, d, at + leafEntry, (count - i - 1) * leafEntry);
                d.putInt(COUNT, count - 1);
                h.written(0, ENTRIES + count * leafEntry);
            }
            at(point, i >= 0);
            return gcl.unlockWritten(h).map(i >= 0);
        });
    }

    /** A visited entry of a scan. */
    @FunctionalInterface
    public interface Visitor {
        void visit(long key, DirectBuffer value, int offset);
    }

    /** Visits up to {@code count} entries from {@code from} on, in key order: how many it visited. */
    public Future<Integer> scan(final long from, final int count, final Visitor visitor) {
        checkKey(from);
        return descend(from, 0, false).compose(h -> scanFrom(h, from, count, 0, visitor));
    }

    private Future<Integer> scanFrom(final Gcl.Handle h, final long from, final int count, final int seen,
                                     final Visitor visitor) {
        final UnsafeBuffer d = h.data();
        int n = seen;
        final int entries = d.getInt(COUNT);
        for (int i = 0; i < entries && n < count; i++) {
            final long k = d.getLong(ENTRIES + i * leafEntry);
            if (k >= from) {
                visitor.visit(k, d, ENTRIES + i * leafEntry + 8);
                n++;
            }
        }
        final long right = d.getLong(RIGHT);
        if (n >= count || right == GlobalPointer.NONE) {
            gcl.unlock(h);
            return Future.succeededFuture(n);
        }
        final int visited = n;
        return gcl.sLock(right).compose(next -> {
            gcl.unlock(h);
            return scanFrom(next, from, count, visited, visitor);
        });
    }

    private void checkValue(final DirectBuffer value) {
        if (value.capacity() < valueBytes) {
            throw new IllegalArgumentException("a value of " + value.capacity() + " bytes; the tree's are "
                + valueBytes);
        }
    }

    private void putValue(final Gcl.Handle h, final int i, final DirectBuffer value) {
        final int at = ENTRIES + i * leafEntry + 8;
        h.data().putBytes(at, value, 0, valueBytes);
        h.written(at, valueBytes);
    }

    // ------------------------------------------------------------------------------------------ descent

    /**
     * The node of {@code level} whose range holds {@code key}, latched (Exclusive if {@code exclusive}), reached from
     * the root by coupled Shared latches and right moves. The level must exist (the caller saw it in the meta line).
     */
    private Future<Gcl.Handle> descend(final long key, final int level, final boolean exclusive) {
        if (root == GlobalPointer.NONE || rootLevel < level) {
            return gcl.sLock(meta).compose(m -> {
                root = m.data().getLong(META_ROOT);
                rootLevel = (int) m.data().getLong(META_LEVEL);
                gcl.unlock(m);
                if (rootLevel < level) {
                    return Future.failedFuture(new IllegalStateException("level " + level + " above the root's "
                        + rootLevel));
                }
                return descend(key, level, exclusive);
            });
        }
        return (rootLevel == level && exclusive ? gcl.xLock(root) : gcl.sLock(root)).compose(h -> walk(h, key, level,
            exclusive));
    }

    /** Latches {@code next}, then lets {@code held} go. */
    private Future<Gcl.Handle> lockCoupled(final Gcl.Handle held, final long next, final boolean exclusive) {
        return (exclusive ? gcl.xLock(next) : gcl.sLock(next)).transform(ar -> {
            gcl.unlock(held); // a failed latch lets the held one go too: the caller holds nothing then
            return ar.failed() ? Future.<Gcl.Handle>failedFuture(ar.cause()) : Future.succeededFuture(ar.result());
        });
    }

    private Future<Gcl.Handle> walk(final Gcl.Handle h, final long key, final int level, final boolean exclusive) {
        final UnsafeBuffer d = h.data();
        final int at = d.getInt(LEVEL);
        if (key >= d.getLong(HIGH)) { // a split moved it right
            final long right = d.getLong(RIGHT);
            if (right == GlobalPointer.NONE) {
                gcl.unlock(h);
                return Future.failedFuture(new IllegalStateException("B-link node " + GlobalPointer.toString(
                    h.gaddr()) + " has high key " + d.getLong(HIGH) + " but no right link"));
            }
            return lockCoupled(h, right, at == level && exclusive).compose(n -> walk(n, key, level, exclusive));
        }
        if (at == level) {
            return Future.succeededFuture(h);
        }
        if (at < level) {
            gcl.unlock(h);
            return Future.failedFuture(new IllegalStateException("B-link descent to level " + level + " reached "
                + "level " + at + " at " + GlobalPointer.toString(h.gaddr())));
        }
        final long child = d.getLong(ENTRIES + childIndex(d, key) * 16 + 8);
        return lockCoupled(h, child, at - 1 == level && exclusive).compose(n -> walk(n, key, level, exclusive));
    }

    /** The entry of an internal node whose child holds {@code key}: the last separator at or below it. */
    static int childIndex(final DirectBuffer d, final long key) {
        int lo = 0;
        int hi = d.getInt(COUNT) - 1;
        while (lo < hi) {
            final int mid = (lo + hi + 1) >>> 1;
            if (d.getLong(ENTRIES + mid * 16) <= key) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** Binary search of a node's entries of {@code entry} bytes: the index, or {@code -(insertion point) - 1}. */
    static int search(final DirectBuffer d, final long key, final int entry) {
        int lo = 0;
        int hi = d.getInt(COUNT) - 1;
        while (lo <= hi) {
            final int mid = (lo + hi) >>> 1;
            final long k = d.getLong(ENTRIES + mid * entry);
            if (k < key) {
                lo = mid + 1;
            } else if (k > key) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -lo - 1;
    }

    // ------------------------------------------------------------------------------------------ insert and split

    /**
     * Inserts at index {@code i} of the node {@code h} holds Exclusive (a leaf's value, or an internal node's child
     * {@code child}), splitting it when full; unlatches it and posts the separator of a split one level up.
     */
    private Future<Void> insertAt(final Gcl.Handle h, final int i, final long key, final DirectBuffer value,
                                  final long child) {
        final UnsafeBuffer d = h.data();
        final int level = d.getInt(LEVEL);
        final int entry = level == 0 ? leafEntry : 16;
        final int capacity = level == 0 ? leafCapacity : innerCapacity;
        final int count = d.getInt(COUNT);
        if (count < capacity) {
            putEntry(d, i, count, entry, key, value, child, level);
            d.putInt(COUNT, count + 1);
            h.written(0, ENTRIES + (count + 1) * entry);
            return gcl.unlockWritten(h);
        }
        // Full: the entries with the new one, in order, in a scratch copy; the upper half moves to a new line.
        final UnsafeBuffer all = new UnsafeBuffer(new byte[ENTRIES + (count + 1) * entry]);
        all.putBytes(0, d, 0, ENTRIES + count * entry);
        putEntry(all, i, count, entry, key, value, child, level);
        final int total = count + 1;
        final int keep = total / 2;
        return gcl.allocate().compose(gcl::xLock).compose(n -> {
            final UnsafeBuffer nd = n.data();
            final long separator = all.getLong(ENTRIES + keep * entry);
            nd.putInt(LEVEL, level);
            nd.putInt(COUNT, total - keep);
            nd.putLong(HIGH, d.getLong(HIGH));
            nd.putLong(RIGHT, d.getLong(RIGHT));
            nd.putBytes(ENTRIES, all, ENTRIES + keep * entry, (total - keep) * entry);
            n.written(0, ENTRIES + (total - keep) * entry);
            final long left = h.gaddr();
            final long made = n.gaddr();
            final Runnable halve = () -> {
                d.putBytes(ENTRIES, all, ENTRIES, keep * entry);
                d.putInt(COUNT, keep);
                d.putLong(HIGH, separator);
                d.putLong(RIGHT, made);
                h.written(0, ENTRIES + capacity * entry);
            };
            if (gcl.writesThrough()) { // the new node on its memory node before the old one links it (B-link lines)
                return gcl.unlockWritten(n).compose(v -> {
                    halve.run();
                    return gcl.unlockWritten(h);
                }).compose(v -> insertSeparator(level + 1, separator, made, left));
            }
            halve.run();
            gcl.unlock(n);
            gcl.unlock(h);
            return insertSeparator(level + 1, separator, made, left);
        });
    }

    private void putEntry(final UnsafeBuffer d, final int i, final int count, final int entry, final long key,
                          final DirectBuffer value, final long child, final int level) {
        final int at = ENTRIES + i * entry;
        d.putBytes(at + entry, d, at, (count - i) * entry);
        d.putLong(at, key);
        if (level == 0) {
            d.putBytes(at + 8, value, 0, valueBytes);
        } else {
            d.putLong(at + 8, child);
        }
    }

    /**
     * Posts ({@code separator}, {@code child}) into {@code level} (the split of {@code left}): into the node there
     * whose range holds it, or into a new root when {@code level} is above the root (its first child the old root,
     * the leftmost node of the level below; a separator of that level not posted yet is found by right moves until
     * it is).
     */
    private Future<Void> insertSeparator(final int level, final long separator, final long child, final long left) {
        return gcl.sLock(meta).compose(m -> {
            root = m.data().getLong(META_ROOT);
            rootLevel = (int) m.data().getLong(META_LEVEL);
            gcl.unlock(m);
            if (rootLevel >= level) {
                return descend(separator, level, true).compose(h -> {
                    final int i = search(h.data(), separator, 16);
                    if (i >= 0) {
                        gcl.unlock(h);
                        return Future.failedFuture(new IllegalStateException("separator " + separator
                            + " posted twice at level " + level));
                    }
                    return insertAt(h, -i - 1, separator, null, child);
                });
            }
            return gcl.xLock(meta).compose(mx -> {
                final long oldRoot = mx.data().getLong(META_ROOT);
                if ((int) mx.data().getLong(META_LEVEL) >= level) { // another split made the root meanwhile
                    gcl.unlock(mx);
                    return insertSeparator(level, separator, child, left);
                }
                return gcl.allocate().compose(gcl::xLock).compose(r -> {
                    final UnsafeBuffer rd = r.data();
                    rd.putInt(LEVEL, level);
                    rd.putInt(COUNT, 2);
                    rd.putLong(HIGH, Long.MAX_VALUE);
                    rd.putLong(RIGHT, GlobalPointer.NONE);
                    rd.putLong(ENTRIES, Long.MIN_VALUE);
                    rd.putLong(ENTRIES + 8, oldRoot);
                    rd.putLong(ENTRIES + 16, separator);
                    rd.putLong(ENTRIES + 24, child);
                    r.written(0, ENTRIES + 32);
                    final long made = r.gaddr();
                    final Runnable raise = () -> {
                        mx.data().putLong(META_ROOT, made);
                        mx.data().putLong(META_LEVEL, level);
                        mx.written(0, 16);
                        root = made;
                        rootLevel = level;
                    };
                    if (gcl.writesThrough()) { // the new root on its memory node before the meta line names it
                        return gcl.unlockWritten(r).compose(v -> {
                            raise.run();
                            return gcl.unlockWritten(mx);
                        });
                    }
                    raise.run();
                    gcl.unlock(r);
                    gcl.unlock(mx);
                    return Future.<Void>succeededFuture();
                });
            });
        });
    }

    // ------------------------------------------------------------------------------------------ transactions

    /**
     * A transaction through the tree under 2PL (issue 21: the tree as a table's index): {@code writes} says whether it
     * may insert, delete or update (then every leaf it reaches is latched Exclusive, else Shared).
     */
    /** A transaction's operations through the tree, whatever its protocol ({@link Txn}, {@link OptimisticTxn},
     * {@link OrderedTxn}); each commits its own way. */
    public interface Operations {
        /** Copies the value of {@code key} (as this transaction left it) into {@code out}: whether it is there. */
        Future<Boolean> lookup(long key, MutableDirectBuffer out);

        /** Inserts {@code key} if it is missing: whether it was (a present key keeps its value). */
        Future<Boolean> insert(long key, DirectBuffer value);

        /** Replaces the value of an existing key: whether it existed. */
        Future<Boolean> update(long key, DirectBuffer value);

        /** Removes {@code key}: whether it was there. */
        Future<Boolean> delete(long key);

        /** Ends it unwritten. */
        void abort();
    }

    public Txn begin(final boolean writes) {
        notTimestamped("2PL transactions");
        return new Txn(writes);
    }

    /**
     * Refuses {@code what} on a timestamped tree: its splits would leave fresh leaves without the timestamps (zero or a
     * reused line's), letting an older TO writer past a younger reader of the key (a phantom).
     */
    private void notTimestamped(final String what) {
        if (timestamped) {
            throw new IllegalStateException(what + " on a timestamped B-link tree: it runs TO transactions only "
                + "(beginOrdered), whose writes carry the leaves' timestamps");
        }
    }

    /**
     * Strict 2PL on the leaves: each operation latches the leaf whose range holds its key and keeps it to the end,
     * so a lookup that found a key missing holds that leaf's latch and no insert of the key (which needs the leaf
     * Exclusive) commits before this one ends (no phantom). Writes are kept here until the commit, which applies
     * them to the leaves it holds (a leaf they overflow splits into fresh lines latched Exclusive, linked to the
     * right), lets every latch go (new nodes first, written through in recoverable runs, then the leaves), then
     * posts the splits' separators as the tree's own inserts do; an abort lets the latches go: the leaves never saw
     * its writes.
     *
     * <p><b>Keys in ascending order</b> (repeats allowed; refused otherwise). Latches may wait (SelccGcl's and
     * SelGcl's do), so the order is what keeps transactions from deadlocking (deviation: the paper's 2PL is no-wait;
     * over the tree's waiting latches a fixed order is the cheaper safe choice): a transaction holds leaves and waits
     * only for a leaf strictly to their right, for an internal node's Shared latch, whose holders (descents,
     * separator inserts) never wait for a leaf, for the meta line's Shared latch (held only to read the root, never
     * while waiting), or, at commit, for fresh lines' Exclusive latches (unlinked: no one else waits on them). So
     * the leaf is never latched coupled with its parent: the descent
     * goes down to level 1 (Shared, coupled), reads the child's separator and pointer, lets the parent go and then
     * latches the child; when the separator is at or below the transaction's previous key (a split not posted yet),
     * it moves right from its own rightmost leaf instead of latching a node to its left. The tree's single
     * operations ({@link #lookup}, {@link #insert}, ...) latch a leaf coupled with its parent: a run that mixes them
     * with transactions could deadlock (a single operation holding the parent Shared while it waits for a
     * transaction's leaf, the transaction waiting for that parent behind a separator insert); no workload mixes them;
     * the scheme is deadlock-free only under that condition.
     *
     * <p>Deviation from SELCC §6.4, whose 2PL locks the heap tuples' lines with the B-tree a separate index: here
     * values live in the leaves and the lock unit is a whole leaf, its latch held for the whole transaction (so
     * other nodes' requests for those lines wait, no handover of them meanwhile).
     */
    public final class Txn implements Operations {
        private final boolean writes;
        /** The leaves held, left to right, each with the writes to its keys (a value, or {@link #GONE}). */
        private final Map<Gcl.Handle, TreeMap<Long, byte[]>> held = new IdentityHashMap<>();
        private final List<Gcl.Handle> order = new ArrayList<>();
        private long last = Long.MIN_VALUE;
        private boolean started;
        private boolean finished;
        /** An operation is waiting for its leaf: a second one (or a commit) is refused until it has it. */
        private boolean pending;
        /** {@link OrderedTxn}'s timestamp, set on the leaves it writes at commit ({@code wts}); -1: none. */
        private long stamp = -1;

        private Txn(final boolean writes) {
            this.writes = writes;
        }

        /** Copies the value of {@code key} (as this transaction left it) into {@code out}: whether it is there. */
        public Future<Boolean> lookup(final long key, final MutableDirectBuffer out) {
            return leaf(key).map(h -> {
                final byte[] mine = held.get(h).get(key);
                if (mine != null) {
                    if (mine != GONE && out != null) {
                        out.putBytes(0, mine, 0, valueBytes);
                    }
                    return mine != GONE;
                }
                final int i = search(h.data(), key, leafEntry);
                if (i >= 0 && out != null) {
                    out.putBytes(0, h.data(), ENTRIES + i * leafEntry + 8, valueBytes);
                }
                return i >= 0;
            });
        }

        /** Inserts {@code key} if it is missing: whether it was (a present key keeps its value). */
        public Future<Boolean> insert(final long key, final DirectBuffer value) {
            return write(key, value, false);
        }

        /** Replaces the value of an existing key: whether it existed. */
        public Future<Boolean> update(final long key, final DirectBuffer value) {
            return write(key, value, true);
        }

        /** Removes {@code key}: whether it was there. */
        public Future<Boolean> delete(final long key) {
            return write(key, null, true);
        }

        private Future<Boolean> write(final long key, final DirectBuffer value, final boolean present) {
            if (!writes) {
                return Future.failedFuture(new IllegalStateException("a read-only B-link transaction (begin(false))"
                    + " cannot write key " + key));
            }
            if (value != null) {
                try {
                    checkValue(value);
                } catch (final IllegalArgumentException e) {
                    return Future.failedFuture(e);
                }
            }
            return leaf(key).map(h -> {
                final TreeMap<Long, byte[]> mine = held.get(h);
                final byte[] had = mine.get(key);
                final boolean there = had != null ? had != GONE : search(h.data(), key, leafEntry) >= 0;
                if (there == present) {
                    final byte[] v = value == null ? GONE : new byte[valueBytes];
                    if (value != null) {
                        value.getBytes(0, v, 0, valueBytes);
                    }
                    mine.put(key, v);
                }
                return there == present;
            });
        }

        /** The leaf whose range holds {@code key}, held to the end (latched now unless this one holds it). */
        private Future<Gcl.Handle> leaf(final long key) {
            try {
                checkKey(key);
            } catch (final IllegalArgumentException e) { // refused as every other refusal here: a failed future
                return Future.failedFuture(e);
            }
            if (finished) {
                return Future.failedFuture(new IllegalStateException("the B-link transaction has ended"));
            }
            if (pending) {
                return Future.failedFuture(new IllegalStateException("a B-link transaction runs one operation at a "
                    + "time: key " + key + " asked while one waits for its leaf"));
            }
            if (started && key < last) {
                return Future.failedFuture(new IllegalArgumentException("B-link transactions take their keys in "
                    + "ascending order (the leaves' latch order): key " + key + " after " + last));
            }
            final long previous = last;
            final Gcl.Handle mine = order.isEmpty() ? null : order.get(order.size() - 1);
            started = true;
            last = key;
            if (mine != null && key < mine.data().getLong(HIGH)) {
                return Future.succeededFuture(mine);
            }
            pending = true;
            return start(key, previous, mine, false).compose(h -> moveRight(h, key, mine)).transform(ar -> {
                pending = false;
                if (ar.failed()) {
                    return Future.<Gcl.Handle>failedFuture(ar.cause());
                }
                final Gcl.Handle h = ar.result();
                if (finished) { // aborted while this one waited: its latches were let go, so is this one
                    if (h != mine) {
                        gcl.unlock(h);
                    }
                    return Future.failedFuture(new IllegalStateException("the B-link transaction ended while key "
                        + key + " waited for its leaf"));
                }
                if (held.putIfAbsent(h, new TreeMap<>()) == null) {
                    order.add(h);
                }
                return Future.succeededFuture(h);
            });
        }

        private Future<Gcl.Handle> latch(final long gaddr) {
            return writes ? gcl.xLock(gaddr) : gcl.sLock(gaddr);
        }

        /** The leaf to move right from: the child level 1 names for {@code key}, or this one's rightmost leaf. */
        private Future<Gcl.Handle> start(final long key, final long previous, final Gcl.Handle mine,
                                         final boolean read) {
            if (!read && rootLevel <= 0) { // unknown, or a leaf as last read: the tree may have grown a level since
                return gcl.sLock(meta).compose(m -> {
                    root = m.data().getLong(META_ROOT);
                    rootLevel = (int) m.data().getLong(META_LEVEL);
                    gcl.unlock(m);
                    return start(key, previous, mine, true);
                });
            }
            if (rootLevel == 0) { // a root leaf is the leftmost leaf
                return mine != null ? Future.succeededFuture(mine) : latch(root);
            }
            return descend(key, 1, false).compose(p -> {
                final int i = childIndex(p.data(), key);
                final long separator = p.data().getLong(ENTRIES + i * 16);
                final long child = p.data().getLong(ENTRIES + i * 16 + 8);
                gcl.unlock(p);
                return mine != null && separator <= previous ? Future.succeededFuture(mine) : latch(child);
            });
        }

        private Future<Gcl.Handle> moveRight(final Gcl.Handle h, final long key, final Gcl.Handle mine) {
            final UnsafeBuffer d = h.data();
            if (key < d.getLong(HIGH)) {
                return Future.succeededFuture(h);
            }
            final long right = d.getLong(RIGHT);
            if (right == GlobalPointer.NONE) {
                if (h != mine) {
                    gcl.unlock(h);
                }
                return Future.failedFuture(new IllegalStateException("B-link leaf " + GlobalPointer.toString(
                    h.gaddr()) + " has high key " + d.getLong(HIGH) + " but no right link"));
            }
            return latch(right).transform(ar -> {
                if (h != mine) {
                    gcl.unlock(h);
                }
                return ar.failed() ? Future.failedFuture(ar.cause()) : moveRight(ar.result(), key, mine);
            });
        }

        /**
         * Applies the writes to the leaves held and lets every latch go, then completes; the splits' separators are
         * posted after, detached (a failed post is counted, {@link BLinkTree#unpostedSeparators}: the commit was
         * visible already, and right links keep every key reachable). The commit point is this call (every latch is
         * held then): later transactions see all of its writes or wait. Refused while an operation waits for its leaf.
         *
         * <p>In recoverable runs ({@link Gcl#writesThrough}: compute nodes may die) the writes are decided by one redo
         * record ({@link Gcl#logWrites}) of every line the commit writes, fresh lines and leaves, each line's whole
         * data, made durable after they are filled in the local copies and before any of them is written through: a
         * node that dies before it is durable has changed no line its memory node holds (fresh lines are unlinked:
         * leaked), one that dies after has its record rolled forward by a survivor, each line still held Exclusive by
         * it whose memory-node version is below the record's, so all of the commit lands, never part of it. A record
         * refused (the log region full) restores the leaves' copies and aborts; one in doubt (its WRITE failed and may
         * have landed) gives the loop up with the latches held, for its recovery.
         */
        public Future<Void> commit() {
            if (finished) {
                return Future.failedFuture(new IllegalStateException("the B-link transaction has ended"));
            }
            if (pending) {
                return Future.failedFuture(new IllegalStateException("a B-link transaction commits after its "
                    + "operations: one still waits for its leaf"));
            }
            finished = true;
            final List<long[]> separators = new ArrayList<>();
            final List<Gcl.Handle> written = new ArrayList<>();
            final List<UnsafeBuffer> merged = new ArrayList<>();
            int lines = 0;
            for (final Gcl.Handle h : order) {
                if (!held.get(h).isEmpty()) {
                    final UnsafeBuffer m = merge(h.data(), held.get(h));
                    written.add(h);
                    merged.add(m);
                    lines += pieces(m) - 1;
                }
            }
            // Every fresh line first: a failed allocation leaves the leaves' copies untouched.
            final List<Gcl.Handle> made = new ArrayList<>();
            Future<Void> fresh = Future.succeededFuture();
            for (int j = 0; j < lines; j++) {
                fresh = fresh.compose(v -> gcl.allocate().compose(gcl::xLock).map(x -> {
                    made.add(x);
                    return null;
                }));
            }
            return fresh.transform(ar -> {
                if (ar.failed()) {
                    abortAfter(made);
                    return Future.failedFuture(ar.cause());
                }
                final boolean logged = gcl.writesThrough() && !written.isEmpty();
                final List<byte[]> before = new ArrayList<>(); // the leaves' copies, restored if the record fails
                if (logged) {
                    written.forEach(h -> before.add(copyOf(h.data())));
                }
                final java.util.Iterator<Gcl.Handle> nodes = made.iterator();
                for (int j = 0; j < written.size(); j++) {
                    place(written.get(j), merged.get(j), nodes, separators);
                }
                final List<Gcl.Handle> logs = new ArrayList<>(made);
                logs.addAll(written);
                return (logged ? gcl.logWrites(logs) : Future.<Runnable>succeededFuture(() -> { })).transform(lr -> {
                    if (lr.failed()) {
                        if (!(lr.cause() instanceof io.scythe.txn.recovery.RedoLog.RecordInDoubtException)) {
                            for (int j = 0; j < written.size(); j++) { // not decided: nothing of it was written
                                written.get(j).data().putBytes(0, before.get(j));
                            }
                            abortAfter(made);
                        } // else in doubt: the loop gave up, the latches stay for its recovery to roll forward
                        return Future.failedFuture(lr.cause());
                    }
                    return applied(made).onSuccess(v -> {
                        lr.result().run();
                        commitSplits += made.size();
                        postDetached(separators);
                    });
                });
            });
        }

        /**
         * The commit's lines let go once decided: the fresh lines first (written through in recoverable runs), then
         * the leaves (written ones written through, read ones unlatched); completes when every one is let go.
         */
        private Future<Void> applied(final List<Gcl.Handle> made) {
            final List<Future<Void>> news = new ArrayList<>();
            made.forEach(n -> news.add(gcl.unlockWritten(n)));
            return Future.join(news).transform(nr -> { // every leaf let go whatever the fresh lines' outcome
                final List<Future<Void>> olds = new ArrayList<>();
                for (final Gcl.Handle h : order) {
                    if (held.get(h).isEmpty()) {
                        gcl.unlock(h);
                    } else {
                        olds.add(gcl.unlockWritten(h));
                    }
                }
                return Future.join(olds).transform(or -> nr.failed() ? Future.<Void>failedFuture(nr.cause())
                    : or.failed() ? Future.<Void>failedFuture(or.cause()) : Future.<Void>succeededFuture());
            });
        }

        /** Lets every latch go: the leaves never saw this transaction's writes. */
        public void abort() {
            if (finished) {
                return;
            }
            finished = true;
            order.forEach(gcl::unlock);
        }

        /** A failed commit: lets the fresh lines taken so far and every leaf go, unwritten. */
        private void abortAfter(final List<Gcl.Handle> made) {
            made.forEach(gcl::free); // never linked: back to the free list, not leaked
            order.forEach(gcl::unlock);
        }

        /** Leaf {@code d}'s entries with the writes {@code w} merged in, in key order (a buffer of whole entries). */
        private UnsafeBuffer merge(final UnsafeBuffer d, final TreeMap<Long, byte[]> w) {
            final int count = d.getInt(COUNT);
            final UnsafeBuffer all = new UnsafeBuffer(new byte[(count + w.size()) * leafEntry]);
            int n = 0;
            int i = 0;
            final java.util.Iterator<Map.Entry<Long, byte[]>> it = w.entrySet().iterator();
            Map.Entry<Long, byte[]> e = it.hasNext() ? it.next() : null;
            while (i < count || e != null) {
                final long k = i < count ? d.getLong(ENTRIES + i * leafEntry) : Long.MAX_VALUE;
                if (e != null && e.getKey() <= k) {
                    if (e.getValue() != GONE) {
                        all.putLong(n * leafEntry, e.getKey());
                        all.putBytes(n * leafEntry + 8, e.getValue(), 0, valueBytes);
                        n++;
                    }
                    if (e.getKey() == k) {
                        i++;
                    }
                    e = it.hasNext() ? it.next() : null;
                } else {
                    all.putBytes(n * leafEntry, d, ENTRIES + i * leafEntry, leafEntry);
                    n++;
                    i++;
                }
            }
            return new UnsafeBuffer(all, 0, n * leafEntry);
        }

        /** How many leaves {@code merged}'s entries need. */
        private int pieces(final UnsafeBuffer merged) {
            return Math.max(1, (merged.capacity() / leafEntry + leafCapacity - 1) / leafCapacity);
        }

        /**
         * Writes {@code merged} into leaf {@code h}; when it overflows, into {@code h} and fresh lines from
         * {@code nodes} (latched Exclusive), chained to its right in key order, each one's separator noted
         * (separator, node, its left neighbour) for the posts after the latches go.
         */
        private void place(final Gcl.Handle h, final UnsafeBuffer merged, final java.util.Iterator<Gcl.Handle> nodes,
                           final List<long[]> separators) {
            final UnsafeBuffer d = h.data();
            final int count = d.getInt(COUNT);
            final int total = merged.capacity() / leafEntry;
            final int pieces = pieces(merged);
            final List<Gcl.Handle> chain = new ArrayList<>(pieces);
            chain.add(h);
            for (int j = 1; j < pieces; j++) {
                chain.add(nodes.next());
            }
            final long high = d.getLong(HIGH);
            final long right = d.getLong(RIGHT);
            for (int j = pieces - 1; j >= 0; j--) { // right to left: the old leaf's high and right link read first
                final int from = (int) ((long) j * total / pieces);
                final int to = (int) ((long) (j + 1) * total / pieces);
                final Gcl.Handle x = chain.get(j);
                final UnsafeBuffer xd = x.data();
                final int had = j == 0 ? count : 0;
                xd.putInt(LEVEL, 0);
                xd.putInt(COUNT, to - from);
                xd.putLong(HIGH, j + 1 < pieces ? merged.getLong(to * leafEntry) : high);
                xd.putLong(RIGHT, j + 1 < pieces ? chain.get(j + 1).gaddr() : right);
                xd.putBytes(ENTRIES, merged, from * leafEntry, (to - from) * leafEntry);
                x.written(0, ENTRIES + Math.max(had, to - from) * leafEntry);
            }
            for (int j = 1; j < pieces; j++) {
                separators.add(new long[] {merged.getLong((int) ((long) j * total / pieces) * leafEntry),
                    chain.get(j).gaddr(), chain.get(j - 1).gaddr()});
            }
            if (stamp >= 0) { // TO: every piece written at the stamp, each keeping the leaf's rts (a split's too)
                final long rts = d.getLong(rtsAt);
                for (final Gcl.Handle x : chain) {
                    x.data().putLong(rtsAt, Math.max(rts, stamp));
                    x.data().putLong(rtsAt + 8, stamp);
                    x.written(rtsAt, TIMESTAMP_BYTES);
                }
            }
        }
    }

    /**
     * An optimistic transaction through the tree (issue 21; SELCC §6.4's OCC over the tree's leaves): see
     * {@link OptimisticTxn}.
     */
    public OptimisticTxn beginOptimistic() {
        notTimestamped("OCC transactions");
        return new OptimisticTxn();
    }

    /**
     * OCC through the tree (SELCC §6.4: "OCC ... requires acquiring the SELCC latch for the GCL twice per tuple; once
     * during the read phase and again during the validating phase"). <b>Read phase</b>: each key is looked up under its
     * leaf's Shared latch, let go at once (a one-key read-only {@link Txn}, so the descent never latches a leaf coupled
     * with its parent), and what it found (the value, or absence) is kept; writes are kept here, answered against what
     * was read (or this one's own earlier write of the key). Keys in any order. <b>Commit</b>: a {@link Txn} over every
     * key read, in ascending order, latches their leaves again (Exclusive if anything is written, else Shared; the same
     * deadlock-free order as 2PL) and <b>validates</b> that each key is still as read (present with the same value, or
     * still absent: an insert meanwhile of a key read missing fails it, so no phantom); then applies the writes to the
     * leaves it holds and commits them as {@link Txn#commit} does (a recoverable run's redo record included). The
     * commit point is when the last leaf is validated, every latch held: {@code atCommitPoint} runs then. A validation
     * that fails lets every latch go and fails with {@link io.scythe.txn.AbortReason#VALIDATION} (nothing written).
     *
     * <p>Deviations, as a reviewer of the paper would decide where it is silent: the paper validates tuple versions
     * in heap lines with the B-tree a separate index; here values live in the leaves and no leaf carries a version, so
     * validation compares the values read (a key changed and changed back validates: its value at the commit point is
     * the one read, which is all serializability needs, and the serial replay in commit order checks it). A writing
     * transaction latches its read-only keys' leaves Exclusive at validation too ({@link Txn} latches one kind), more
     * conflicts than Shared would have, no other difference.
     */
    public final class OptimisticTxn extends Buffered {
        private OptimisticTxn() {
        }

        /** Reads a key not read yet: its leaf Shared for the moment (a one-key read-only {@link Txn}). */
        @Override
        Future<byte[]> readNow(final long key, final boolean forWrite) {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[valueBytes]);
            final Txn once = new Txn(false);
            return once.lookup(key, b).transform(ar -> {
                once.abort(); // the leaf's Shared latch let go at once: the read phase holds nothing
                return ar.failed() ? Future.failedFuture(ar.cause())
                    : Future.succeededFuture(ar.result() ? copyOf(b) : GONE);
            });
        }

        /**
         * Validates and commits (class doc): {@code atCommitPoint} runs once every leaf is latched and validated,
         * before anything is applied. Fails with {@link io.scythe.txn.AbortReason#VALIDATION} when a key read changed.
         */
        public Future<Void> commit(final Runnable atCommitPoint) {
            final IllegalStateException refused = refuseCommit();
            if (refused != null) {
                return Future.failedFuture(refused);
            }
            final Txn check = new Txn(!writes.isEmpty());
            final UnsafeBuffer b = new UnsafeBuffer(new byte[valueBytes]);
            Future<Boolean> valid = Future.succeededFuture(true);
            for (final Map.Entry<Long, byte[]> e : read.entrySet()) { // every written key was read: its answer
                final long key = e.getKey();
                final byte[] seen = e.getValue();
                valid = valid.compose(v -> check.lookup(key, b)).compose(found -> {
                    final boolean same = found ? seen != GONE && b.compareTo(new UnsafeBuffer(seen)) == 0
                        : seen == GONE;
                    if (!same) {
                        return Future.failedFuture(new io.scythe.txn.AbortException(
                            io.scythe.txn.AbortReason.VALIDATION, "B-link key " + key + " changed since it was read"));
                    }
                    return apply(check, key); // kept in the check's leaves until its commit applies it
                });
            }
            return valid.compose(v -> {
                atCommitPoint.run(); // every leaf latched and validated
                return check.commit();
            }).onFailure(e -> check.abort());
        }
    }

    /**
     * A timestamp-ordering transaction through a timestamped tree (issue 21; SELCC §6.4's TO over the leaves): see
     * {@link OrderedTxn}. {@code timestamps} gives its timestamp (the TSO counter, the paper's Atomic), taken once at
     * its first access.
     */
    public OrderedTxn beginOrdered(final java.util.function.Supplier<Future<Long>> timestamps) {
        if (!timestamped) {
            throw new IllegalStateException("a TO transaction needs a timestamped tree (new BLinkTree(gcl, valueBytes, "
                + "true), bulk-loaded with reserve(true))");
        }
        return new OrderedTxn(timestamps);
    }

    /**
     * Basic timestamp ordering through the tree (SELCC §6.4: "even read operations require updating the read
     * timestamp, resulting in cache invalidation"), at leaf granularity: each leaf carries {@code rts} (the newest
     * timestamp that read any key of it, present or missing) and {@code wts} (the newest that wrote it). A read latches
     * its key's leaf Exclusive (the raise of {@code rts} is a write of the line), refuses it when {@code wts > ts},
     * raises {@code rts} to {@code ts} (written through in recoverable runs, so no raise lives only in a cache), reads,
     * and lets the leaf go. A write reads its key so (its answer needs it) and also refuses when the leaf's {@code rts}
     * was already past {@code ts}; it is kept here. The commit latches the written keys' leaves Exclusive in ascending
     * order (as {@link Txn}), checks {@code rts <= ts} and {@code wts <= ts} on each again, applies the writes with
     * {@code wts = ts} (a leaf a commit splits gives its pieces its timestamps) and commits as {@link Txn#commit} does;
     * {@code atCommitPoint} runs once every written leaf is latched and checked. A refusal fails the attempt with
     * {@link io.scythe.txn.AbortReason#VALIDATION}, nothing written. A read-only transaction commits with nothing
     * left to check: each read was placed in timestamp order when it ran.
     *
     * <p>Deviations (the paper is silent on both): the timestamps are per leaf, not per tuple (values live in the
     * leaves here; a leaf is also the unit that proves a key missing, so a read of a missing key raises the {@code rts}
     * of the leaf that would hold it and an older insert of it is refused: no phantom, without tombstones as the
     * table TO needs), so unrelated keys of one leaf conflict; and the serial order is the timestamps' order, not the
     * commit order (a reader may commit after a younger writer of what it read): the simulator's ledger replays every
     * committed TO transaction, read-only ones included, in timestamp order.
     */
    public final class OrderedTxn extends Buffered {
        private final java.util.function.Supplier<Future<Long>> timestamps;
        private Future<Long> timestamp;

        private OrderedTxn(final java.util.function.Supplier<Future<Long>> timestamps) {
            this.timestamps = timestamps;
        }

        /** This transaction's timestamp, taken at its first access. */
        public Future<Long> timestamp() {
            if (timestamp == null) {
                timestamp = timestamps.get();
            }
            return timestamp;
        }

        /** Its timestamp once taken, else {@code otherwise} (a transaction with no access never takes one). */
        public long timestampOr(final long otherwise) {
            return timestamp != null && timestamp.succeeded() ? timestamp.result() : otherwise;
        }

        /**
         * Reads a key not read yet: its leaf Exclusive, {@code wts <= ts} checked (for a write {@code rts <= ts} too),
         * {@code rts} raised and written through ({@link Gcl#unlockWritten}; if that WRITE fails the raise stays in
         * the cached copy: conservative, later older writers are refused, none let through), the leaf let go.
         */
        @Override
        Future<byte[]> readNow(final long key, final boolean forWrite) {
            return timestamp().compose(ts -> {
                final Txn once = new Txn(true);
                return once.leaf(key).compose(h -> {
                    once.finished = true; // this one lets the leaf go itself
                    final UnsafeBuffer d = h.data();
                    final long rts = d.getLong(rtsAt);
                    final long wts = d.getLong(rtsAt + 8);
                    if (wts > ts || forWrite && rts > ts) {
                        gcl.unlock(h);
                        return Future.failedFuture(late(key, rts, wts, ts));
                    }
                    final int i = search(d, key, leafEntry);
                    final byte[] v = i < 0 ? GONE : new byte[valueBytes];
                    if (i >= 0) {
                        d.getBytes(ENTRIES + i * leafEntry + 8, v, 0, valueBytes);
                    }
                    if (rts >= ts) {
                        gcl.unlock(h);
                        return Future.succeededFuture(v);
                    }
                    d.putLong(rtsAt, ts);
                    h.written(rtsAt, 8);
                    return gcl.unlockWritten(h).map(x -> v); // recoverable runs: the raise on its memory node
                });
            });
        }

        /**
         * Checks and commits (class doc): {@code atCommitPoint} runs once every written leaf is latched and checked,
         * before anything is applied. Fails with {@link io.scythe.txn.AbortReason#VALIDATION} when a younger
         * transaction read or wrote a written leaf meanwhile.
         */
        public Future<Void> commit(final Runnable atCommitPoint) {
            final IllegalStateException refused = refuseCommit();
            if (refused != null) {
                return Future.failedFuture(refused);
            }
            if (writes.isEmpty()) {
                atCommitPoint.run();
                return Future.succeededFuture();
            }
            final long ts = timestamp.result();
            final Txn check = new Txn(true);
            check.stamp = ts;
            Future<Boolean> checked = Future.succeededFuture(true);
            for (final long key : writes.keySet()) {
                checked = checked.compose(v -> check.leaf(key)).compose(h -> {
                    final long rts = h.data().getLong(rtsAt);
                    final long wts = h.data().getLong(rtsAt + 8);
                    if (rts > ts || wts > ts) {
                        return Future.failedFuture(late(key, rts, wts, ts));
                    }
                    return apply(check, key);
                });
            }
            return checked.compose(v -> {
                atCommitPoint.run(); // every written leaf latched and checked
                return check.commit();
            }).onFailure(e -> check.abort());
        }

        private io.scythe.txn.AbortException late(final long key, final long rts, final long wts, final long ts) {
            return new io.scythe.txn.AbortException(io.scythe.txn.AbortReason.VALIDATION, "B-link key " + key
                + "'s leaf was read at " + rts + " or written at " + wts + ", after this transaction's timestamp "
                + ts);
        }
    }

    /**
     * What {@link OptimisticTxn} and {@link OrderedTxn} share: keys read (their value, or {@link #GONE}) and writes
     * kept here until the commit, each operation answered against this transaction's own write of the key, else what
     * it read, else a read now ({@link #readNow}, the protocol's); one operation at a time; keys in any order.
     */
    abstract class Buffered implements Operations {
        /** Keys read (their value, or {@link #GONE} when absent), in key order: the read set. */
        final TreeMap<Long, byte[]> read = new TreeMap<>();
        /** Keys written (a value, or {@link #GONE}): applied at commit. */
        final TreeMap<Long, byte[]> writes = new TreeMap<>();
        boolean finished;
        /** An operation is reading its key: a second one (or a commit) is refused until it has it. */
        private boolean pending;

        /** Reads {@code key} from the tree as the protocol does (for a write of it when {@code forWrite}). */
        abstract Future<byte[]> readNow(long key, boolean forWrite);

        /** Copies the value of {@code key} (as this transaction left it) into {@code out}: whether it is there. */
        public Future<Boolean> lookup(final long key, final MutableDirectBuffer out) {
            return current(key, false).map(v -> {
                if (v != GONE && out != null) {
                    out.putBytes(0, v, 0, valueBytes);
                }
                return v != GONE;
            });
        }

        /** Inserts {@code key} if it is missing: whether it was (a present key keeps its value). */
        public Future<Boolean> insert(final long key, final DirectBuffer value) {
            return write(key, value, false);
        }

        /** Replaces the value of an existing key: whether it existed. */
        public Future<Boolean> update(final long key, final DirectBuffer value) {
            return write(key, value, true);
        }

        /** Removes {@code key}: whether it was there. */
        public Future<Boolean> delete(final long key) {
            return write(key, null, true);
        }

        /** Ends it unwritten: it holds no latch between operations. */
        public void abort() {
            finished = true;
        }

        private Future<Boolean> write(final long key, final DirectBuffer value, final boolean present) {
            if (value != null) {
                try {
                    checkValue(value);
                } catch (final IllegalArgumentException e) {
                    return Future.failedFuture(e);
                }
            }
            return current(key, true).map(v -> {
                final boolean there = v != GONE;
                if (there == present) {
                    final byte[] w = value == null ? GONE : new byte[valueBytes];
                    if (value != null) {
                        value.getBytes(0, w, 0, valueBytes);
                    }
                    writes.put(key, w);
                }
                return there == present;
            });
        }

        /** The key as this transaction sees it: its own write, else what it read, else {@link #readNow}. */
        private Future<byte[]> current(final long key, final boolean forWrite) {
            try {
                checkKey(key);
            } catch (final IllegalArgumentException e) {
                return Future.failedFuture(e);
            }
            if (finished) {
                return Future.failedFuture(new IllegalStateException("the B-link transaction has ended"));
            }
            if (pending) {
                return Future.failedFuture(new IllegalStateException("a B-link transaction runs one operation at a "
                    + "time: key " + key + " asked while one reads its leaf"));
            }
            final byte[] mine = writes.containsKey(key) ? writes.get(key) : read.get(key);
            if (mine != null) {
                return Future.succeededFuture(mine);
            }
            pending = true;
            return readNow(key, forWrite).transform(ar -> {
                pending = false;
                if (ar.failed()) {
                    return Future.failedFuture(ar.cause());
                }
                read.put(key, ar.result());
                return Future.succeededFuture(ar.result());
            });
        }

        /** Why a commit cannot start now, or null (it starts: the transaction is over from here). */
        IllegalStateException refuseCommit() {
            if (finished) {
                return new IllegalStateException("the B-link transaction has ended");
            }
            if (pending) {
                return new IllegalStateException("a B-link transaction commits after its operations: one still "
                    + "reads its leaf");
            }
            finished = true;
            return null;
        }

        /** Puts this transaction's write of {@code key} (if any) into {@code check}, which holds the key's leaf. */
        Future<Boolean> apply(final Txn check, final long key) {
            final byte[] w = writes.get(key);
            final boolean was = read.get(key) != GONE; // every written key was read first: its answer needed it
            if (w == null || w == GONE && !was) {
                return Future.succeededFuture(true);
            }
            return w == GONE ? check.delete(key)
                : was ? check.update(key, new UnsafeBuffer(w)) : check.insert(key, new UnsafeBuffer(w));
        }
    }

    private static byte[] copyOf(final UnsafeBuffer data) {
        final byte[] b = new byte[data.capacity()];
        data.getBytes(0, b);
        return b;
    }

    /** A write of {@link Txn} that removes its key. */
    private static final byte[] GONE = new byte[0];

    // ------------------------------------------------------------------------------------------ memory-node side

    /**
     * Bulk-loads {@code keys} sorted keys ({@code keyOf(i)}, increasing) with values {@code valueOf(i)} into memory
     * node {@code part}'s region {@code t} (of {@code parts}), leaves and internal nodes filled to {@code fill} of
     * their capacity, node {@code j} of the whole tree (leaves first, level by level, left to right) on memory node
     * {@code j % parts}, line {@link #FIRST_NODE_LINE} {@code + j / parts}; memory node 0 also gets the meta line.
     * Every part computes the same layout and writes its own nodes.
     *
     * @return the first line of {@code t} the bulk load left free
     */
    public static long bulkLoad(final Table t, final int part, final int parts, final long keys,
                                final LongFunction<Long> keyOf, final LongFunction<DirectBuffer> valueOf,
                                final int valueBytes, final double fill) {
        return bulkLoad(t, part, parts, keys, keyOf, valueOf, valueBytes, fill, 0);
    }

    /** As above, leaves keeping their last {@code reserve} data bytes free ({@link #reserve}; zero there). */
    public static long bulkLoad(final Table t, final int part, final int parts, final long keys,
                                final LongFunction<Long> keyOf, final LongFunction<DirectBuffer> valueOf,
                                final int valueBytes, final double fill, final int reserve) {
        final int dataBytes = t.schema().maxValueBytes();
        final int leafEntry = leafEntryBytes(valueBytes);
        final int leafFill = Math.max(2, (int) ((dataBytes - ENTRIES - reserve) / leafEntry * fill));
        final int innerFill = Math.max(2, (int) ((dataBytes - ENTRIES) / 16 * fill));
        final int lineBytes = t.objectSlotBytes();
        long nodes = 0;
        // Level 0: leaves; each level above: one separator per node below.
        List<long[]> below = new ArrayList<>(); // {node number, first key} of each node of the level below
        final long leaves = Math.max(1, (keys + leafFill - 1) / leafFill);
        for (long l = 0; l < leaves; l++) {
            final long from = l * leafFill;
            final long to = Math.min(keys, from + leafFill);
            final long node = nodes++;
            final long high = l + 1 < leaves ? keyOf.apply(to) : Long.MAX_VALUE;
            final long first = from < to ? keyOf.apply(from) : Long.MIN_VALUE;
            below.add(new long[] {node, l == 0 ? Long.MIN_VALUE : first});
            if (node % parts == part) {
                final int at = nodeOffset(t, node / parts, lineBytes);
                final org.agrona.concurrent.AtomicBuffer mem = t.objectMemory();
                mem.putInt(at + LEVEL, 0);
                mem.putInt(at + COUNT, (int) (to - from));
                mem.putLong(at + HIGH, high);
                mem.putLong(at + RIGHT, l + 1 < leaves ? pointerOf(t, node + 1, parts) : GlobalPointer.NONE);
                for (long k = from; k < to; k++) {
                    final int e = at + ENTRIES + (int) (k - from) * leafEntry;
                    mem.putLong(e, keyOf.apply(k));
                    mem.putBytes(e + 8, valueOf.apply(k), 0, valueBytes);
                }
            }
        }
        int level = 0;
        while (below.size() > 1) {
            level++;
            final List<long[]> above = new ArrayList<>();
            final int n = below.size();
            final int inner = (n + innerFill - 1) / innerFill;
            for (int j = 0; j < inner; j++) {
                final int from = j * innerFill;
                final int to = Math.min(n, from + innerFill);
                final long node = nodes++;
                above.add(new long[] {node, below.get(from)[1]});
                if (node % parts == part) {
                    final int at = nodeOffset(t, node / parts, lineBytes);
                    final org.agrona.concurrent.AtomicBuffer mem = t.objectMemory();
                    mem.putInt(at + LEVEL, level);
                    mem.putInt(at + COUNT, to - from);
                    mem.putLong(at + HIGH, j + 1 < inner ? below.get(to)[1] : Long.MAX_VALUE);
                    mem.putLong(at + RIGHT, j + 1 < inner ? pointerOf(t, node + 1, parts) : GlobalPointer.NONE);
                    for (int c = from; c < to; c++) {
                        final int e = at + ENTRIES + (c - from) * 16;
                        mem.putLong(e, below.get(c)[1]);
                        mem.putLong(e + 8, pointerOf(t, below.get(c)[0], parts));
                    }
                }
            }
            below = above;
        }
        if (part == 0) {
            final int at = nodeOffset(t, META_LINE - FIRST_NODE_LINE, lineBytes);
            t.objectMemory().putLong(at + META_ROOT, pointerOf(t, below.get(0)[0], parts));
            t.objectMemory().putLong(at + META_LEVEL, level);
        }
        return FIRST_NODE_LINE + nodes / parts + (part < nodes % parts ? 1 : 0);
    }

    /** Offset of the data of line {@code FIRST_NODE_LINE + index} in {@code t}'s object memory. */
    private static int nodeOffset(final Table t, final long index, final int lineBytes) {
        final long line = FIRST_NODE_LINE + index;
        if (line >= t.schema().capacity()) {
            throw new IllegalArgumentException("the GCL region of " + t.schema().capacity() + " lines is too small for"
                + " the bulk-loaded tree");
        }
        return GclRegion.lineOffset(t, line) + ObjectLayout.VALUE_OFFSET;
    }

    private static long pointerOf(final Table t, final long node, final int parts) {
        final long stride = t.describe().objects().length() / t.schema().capacity();
        return GlobalPointer.of((int) (node % parts), (FIRST_NODE_LINE + node / parts) * stride);
    }
}
