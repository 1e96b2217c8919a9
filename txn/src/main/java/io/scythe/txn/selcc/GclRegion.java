package io.scythe.txn.selcc;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Catalog;

import java.util.List;

/**
 * The GCL region of every memory node (SELCC §3.1, Table 1's Allocate/Free): the object slots of table
 * {@value #TABLE} on each memory node are global cache lines, addressed by {@link GlobalPointer}s whose node is the
 * partition's index in the catalog and whose offset is the slot's byte offset in the region. A line's latch word is
 * the slot's protocol word (package doc), its data the slot's value bytes; the table's own index is never used.
 *
 * <p>Line 0 of each region is the allocator's header: its first data word is the index of the next line never
 * handed out, advanced by compute nodes with an RDMA FAA a chunk at a time ({@link GclAllocator}); the memory node
 * runs no code for it (compute-free memory nodes).
 */
public final class GclRegion {
    public static final String TABLE = "selcc_gcl";
    public static final int TABLE_ID = 58;
    /** The allocator header's line. */
    public static final long HEADER_LINE = 0;

    private final List<Catalog.Partition> partitions;
    private final int lineBytes;
    private final int dataBytes;
    private final long stride;
    private final long lines;

    private GclRegion(final List<Catalog.Partition> partitions) {
        this.partitions = partitions;
        final Catalog.Partition first = partitions.get(0);
        this.lineBytes = first.descriptor().objectSlotBytes();
        this.dataBytes = first.descriptor().schema().maxValueBytes();
        this.lines = first.descriptor().schema().capacity();
        this.stride = first.descriptor().objects().length() / lines;
        if (stride < lineBytes) {
            throw new IllegalStateException("GCL region of " + first.node() + ": " + first.descriptor().objects()
                .length() + " bytes for " + lines + " lines of " + lineBytes);
        }
        for (final Catalog.Partition p : partitions) {
            if (p.descriptor().schema().capacity() != lines || p.descriptor().objectSlotBytes() != lineBytes) {
                throw new IllegalStateException("GCL regions differ across memory nodes: " + p.node());
            }
        }
    }

    /** The region as the catalog describes it; a clear error when no memory node has one. */
    public static GclRegion of(final Catalog catalog) {
        final Catalog.Table table;
        try {
            table = catalog.table(TABLE);
        } catch (final RuntimeException e) {
            throw new IllegalStateException("no GCL region: the memory nodes have no table '" + TABLE + "' (load it "
                + "with GclRegion.load)", e);
        }
        return new GclRegion(table.partitions());
    }

    /**
     * Creates memory node {@code db}'s region of {@code lines} lines of {@code dataBytes} data each; lines below
     * {@code firstFree} are taken already (a bulk load wrote them), the allocator hands out the rest.
     */
    public static Table load(final LogDb db, final int dataBytes, final long lines, final long firstFree) {
        if (lines < 2 || firstFree < 1 || firstFree > lines) {
            throw new IllegalArgumentException("GCL region of " + lines + " lines, first free " + firstFree
                + ": needs the header line and at least one line, first free in [1, lines]");
        }
        GclDescriptor.checkLineBytes(ObjectLayout.slotBytes(dataBytes));
        final Table t = db.create(TableSchema.fixed(TABLE_ID, TABLE, dataBytes, lines).withVersionCapacity(0));
        t.objectMemory().putLong(lineOffset(t, HEADER_LINE) + ObjectLayout.VALUE_OFFSET, firstFree);
        return t;
    }

    /** Byte offset of line {@code index} in {@code t}'s object memory (memory-node side: loads and checks). */
    public static int lineOffset(final Table t, final long index) {
        final long stride = t.describe().objects().length() / t.schema().capacity();
        return Math.toIntExact(index * stride);
    }

    public int memoryNodes() {
        return partitions.size();
    }

    public long lines() {
        return lines;
    }

    public int lineBytes() {
        return lineBytes;
    }

    public int dataBytes() {
        return dataBytes;
    }

    /** The pointer to line {@code index} of memory node {@code mn}. */
    public long pointer(final int mn, final long index) {
        if (index < 0 || index >= lines) {
            throw new IllegalArgumentException("line " + index + " outside the region's " + lines);
        }
        return GlobalPointer.of(mn, index * stride);
    }

    /** The line index of {@code gaddr} in its node's region. */
    public long index(final long gaddr) {
        return GlobalPointer.offset(gaddr) / stride;
    }

    /** The partition (memory node's region) holding {@code gaddr}. */
    Catalog.Partition partition(final long gaddr) {
        final int mn = GlobalPointer.node(gaddr);
        if (gaddr == GlobalPointer.NONE || mn >= partitions.size() || GlobalPointer.offset(gaddr) % stride != 0
            || index(gaddr) >= lines) {
            throw new IllegalArgumentException("not a global cache line: " + GlobalPointer.toString(gaddr));
        }
        return partitions.get(mn);
    }

    public String node(final long gaddr) {
        return partition(gaddr).node();
    }

    public String node(final int mn) {
        return partitions.get(mn).node();
    }

    /** Remote address of the line (its slot). */
    public long address(final long gaddr) {
        return partition(gaddr).descriptor().objects().address() + GlobalPointer.offset(gaddr);
    }

    public int rkey(final long gaddr) {
        return partition(gaddr).descriptor().objects().rkey();
    }

    /** Remote address of memory node {@code mn}'s allocator word (the header line's first data word). */
    long headerWord(final int mn) {
        return partitions.get(mn).descriptor().objects().address() + HEADER_LINE * stride + ObjectLayout.VALUE_OFFSET;
    }

    int rkey(final int mn) {
        return partitions.get(mn).descriptor().objects().rkey();
    }
}
