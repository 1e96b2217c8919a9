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
 */
public final class LogDb {
    private final Nic nic;
    private final Map<String, Table> byName = new ConcurrentHashMap<>();
    private final Map<Integer, Table> byId = new ConcurrentHashMap<>();

    public LogDb(final Nic nic) {
        this.nic = nic;
    }

    public Nic nic() {
        return nic;
    }

    /**
     * Creates a table sized for {@code schema.capacity()} records.
     *
     * @throws IllegalArgumentException when a table of that name or id exists, or it does not fit one region
     */
    public synchronized Table create(final TableSchema schema) {
        if (byName.containsKey(schema.name()) || byId.containsKey(schema.id())) {
            throw new IllegalArgumentException("table " + schema.name() + " (id " + schema.id()
                + ") already exists on memory node " + nic.node());
        }
        final long objectBytes = schema.capacity() * ObjectLayout.slotBytes(schema.maxValueBytes());
        final int buckets = schema.index() == IndexKind.HASH
            ? HashIndexLayout.bucketsFor(schema.capacity(), HashIndexLayout.DEFAULT_SLOTS_PER_RECORD) : 0;
        final long indexBytes = schema.index() == IndexKind.HASH
            ? (long) buckets * HashIndexLayout.BUCKET_BYTES : SkipListLayout.regionBytesFor(schema.capacity());
        final long versionBytes = schema.versionCapacity() * VersionLayout.slotBytes(schema.maxValueBytes());
        final List<MemoryRegion> registered = new ArrayList<>();
        try {
            final MemoryRegion objects = register(schema.name() + ".objects", objectBytes, registered);
            final MemoryRegion index = register(schema.name() + ".index", indexBytes, registered);
            final MemoryRegion versions = versionBytes == 0 ? null
                : register(schema.name() + ".versions", versionBytes, registered);
            final Table table = new Table(schema, objects, index, versions, buckets, schema.id());
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

    public Table table(final String name) {
        return byName.get(name);
    }

    public Table table(final int id) {
        return byId.get(id);
    }

    public Collection<Table> tables() {
        return List.copyOf(byName.values());
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
