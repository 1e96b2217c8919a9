package io.scythe.storage;

import io.scythe.fabric.FabricException;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * LogDB (Scythe §4.7): a memory node's tables, each in registered memory of the node's NIC. Creating a table
 * registers its regions (objects, index, version log) and zeroes them: call it off the event loop.
 *
 * <p>With replication the node also keeps backup copies of other nodes' partitions, as tables of their own
 * ({@link BackupTables}); a loader fills one through {@link #backupView}, which names them for it.
 */
public final class LogDb {
    private final Nic nic;
    private final Map<String, Table> byName;
    private final Map<Integer, Table> byId;
    /** 0: the store itself; b: the view a loader of backup b sees ({@link #backupView}). */
    private final int backup;
    /** Shared by the store and its views: creation checks and adds under it. */
    private final Object creation;
    /**
     * Bytes each object slot of a table gets beyond header and value ({@link #objectRoom(java.util.function.ToIntFunction)}):
     * one holder, shared with the views.
     */
    private final java.util.function.ToIntFunction<TableSchema>[] room;
    /** The format of each table created from now on ({@link #objectFormat}): one holder, shared with the views. */
    private final java.util.function.Function<TableSchema, ObjectFormat>[] format;

    public LogDb(final Nic nic) {
        this.nic = nic;
        this.byName = new ConcurrentHashMap<>();
        this.byId = new ConcurrentHashMap<>();
        this.backup = 0;
        this.creation = new Object();
        @SuppressWarnings("unchecked")
        final java.util.function.ToIntFunction<TableSchema>[] none = new java.util.function.ToIntFunction[] {s -> 0};
        this.room = none;
        @SuppressWarnings("unchecked")
        final java.util.function.Function<TableSchema, ObjectFormat>[] full = new java.util.function.Function[] {
            s -> ObjectFormat.FULL};
        this.format = full;
    }

    private LogDb(final LogDb store, final int backup) {
        this.nic = store.nic;
        this.byName = store.byName;
        this.byId = store.byId;
        this.backup = backup;
        this.creation = store.creation;
        this.room = store.room;
        this.format = store.format;
    }

    /**
     * Gives every object slot of the tables created from now on {@code extra} bytes beyond its header and largest
     * value (8-byte aligned; 0 by default): room a protocol keeps in the object, after the value, that one READ of the
     * slot fetches with it (RCC's MVCC keeps its older versions there, {@code io.scythe.txn.Protocol#objectRoom}).
     * The value, its length and the header stay where {@link ObjectLayout} puts them, so loaders, services and
     * checks see the objects as before.
     */
    public LogDb objectRoom(final java.util.function.ToIntFunction<TableSchema> extra) {
        synchronized (creation) {
            room[0] = java.util.Objects.requireNonNull(extra, "extra");
        }
        return this;
    }

    /**
     * Gives every table created from now on the format {@code format} says for its schema: the protocol words its
     * objects carry ({@link ObjectFormat}; {@link ObjectFormat#FULL} by default). Backup tables made here get it too.
     */
    public LogDb objectFormat(final java.util.function.Function<TableSchema, ObjectFormat> format) {
        synchronized (creation) {
            this.format[0] = java.util.Objects.requireNonNull(format, "format");
        }
        return this;
    }

    /**
     * This store as the loader of backup {@code backup} (1..{@link BackupTables#MAX_BACKUPS}) of another node's
     * partition sees it: {@link #create} makes the backup of the schema given ({@link BackupTables#schemaOf}),
     * {@link #table(String)} and {@link #table(int)} find it by the primary's name and id, {@link #tables()} lists
     * that backup's tables. The tables are this store's: served, listed and probed with the others.
     */
    public LogDb backupView(final int backup) {
        if (this.backup != 0) {
            throw new IllegalStateException("a backup view has no backup views");
        }
        BackupTables.schemaOf(TableSchema.fixed(1, "t", 8, 1), backup); // checks the number
        return new LogDb(this, backup);
    }

    public Nic nic() {
        return nic;
    }

    /**
     * Creates a table sized for {@code schema.capacity()} records.
     *
     * @throws IllegalArgumentException when a table of that name or id exists, or it does not fit one region
     */
    public Table create(final TableSchema asked) {
        final TableSchema schema = backup == 0 ? asked : BackupTables.schemaOf(asked, backup);
        synchronized (creation) {
            return createTable(schema);
        }
    }

    private Table createTable(final TableSchema schema) {
        if (byName.containsKey(schema.name()) || byId.containsKey(schema.id())) {
            throw new IllegalArgumentException("table " + schema.name() + " (id " + schema.id()
                + ") already exists on memory node " + nic.node());
        }
        final int extra = room[0].applyAsInt(schema);
        if (extra < 0) {
            throw new IllegalArgumentException("table " + schema.name() + ": object room of " + extra + " bytes");
        }
        final int slotBytes = ObjectLayout.slotBytes(schema.maxValueBytes()) + ObjectLayout.align8(extra);
        final long objectBytes = schema.capacity() * slotBytes;
        final int buckets = schema.index() == IndexKind.HASH
            ? HashIndexLayout.bucketsFor(schema.capacity(), HashIndexLayout.DEFAULT_SLOTS_PER_RECORD) : 0;
        final long indexBytes = schema.index() == IndexKind.HASH
            ? (long) buckets * HashIndexLayout.BUCKET_BYTES : SkipListLayout.regionBytesFor(schema.capacity());
        final long versionBytes = schema.versionCapacity() * VersionLayout.slotBytes(schema.maxValueBytes());
        final List<MemoryRegion> registered = new ArrayList<>();
        try {
            final MemoryRegion objects = register(schema.name() + ".objects", objectBytes, registered);
            final MemoryRegion index = register(schema.name() + ".index", IndexRegionLayout.regionBytes(indexBytes),
                registered);
            final MemoryRegion versions = versionBytes == 0 ? null
                : register(schema.name() + ".versions", versionBytes, registered);
            final Table table = new Table(schema, objects, index, versions, buckets, schema.id(), slotBytes);
            table.format(java.util.Objects.requireNonNull(format[0].apply(schema), "format of " + schema.name()));
            byName.put(schema.name(), table);
            byId.put(schema.id(), table);
            return table;
        } catch (final FabricException e) {
            for (final MemoryRegion r : registered) {
                nic.deregister(r);
            }
            throw new IllegalArgumentException("table " + schema.name() + " does not fit: " + e.getMessage(), e);
        }
    }

    private MemoryRegion register(final String name, final long bytes, final List<MemoryRegion> registered) {
        final MemoryRegion region = nic.register(name, bytes, MemoryKind.HOST);
        registered.add(region);
        return region;
    }

    /** The table called {@code name} (in a backup view: the backup of the table called so). */
    public Table table(final String name) {
        return byName.get(backup == 0 ? name : BackupTables.nameOf(name, backup));
    }

    /** The table of id {@code id} (in a backup view: the backup of the table of that id). */
    public Table table(final int id) {
        return byId.get(backup == 0 ? id : id + backup * BackupTables.ID_STRIDE);
    }

    /** Every table of the store, backups included (in a backup view: that backup's tables). */
    public Collection<Table> tables() {
        if (backup == 0) {
            return List.copyOf(byName.values());
        }
        return byName.values().stream().filter(t -> BackupTables.backupOf(t.schema()) == backup).toList();
    }

    /** Reclaims what no transaction at {@code horizon} or later can read, in every table. */
    public long reclaim(final long horizon) {
        long freed = 0;
        for (final Table table : byName.values()) {
            freed += table.reclaim(horizon);
        }
        return freed;
    }
}
