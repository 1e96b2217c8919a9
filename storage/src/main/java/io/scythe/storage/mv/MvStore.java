package io.scythe.storage.mv;

import io.scythe.fabric.FabricException;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.storage.HashIndexLayout;
import io.scythe.storage.HorizonBoard;
import io.scythe.storage.IndexKind;
import io.scythe.storage.SkipListLayout;
import io.scythe.storage.VersionLayout;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A memory node's multi-version tables, beside its {@link io.scythe.storage.LogDb}: each in registered memory of the
 * node's NIC (regions {@code NAME.mv-objects}, {@code NAME.mv-index}, {@code NAME.mv-versions}). Creating a table
 * registers and zeroes its regions: call it off the event loop.
 */
public final class MvStore {
    private final Nic nic;
    private final Map<String, MvTable> byName = new ConcurrentHashMap<>();
    private final Map<Integer, MvTable> byId = new ConcurrentHashMap<>();

    public MvStore(final Nic nic) {
        this.nic = nic;
    }

    public Nic nic() {
        return nic;
    }

    /**
     * Creates a table sized for {@code schema.table().capacity()} objects.
     *
     * @throws IllegalArgumentException when a table of that name or id exists, or it does not fit one region
     */
    public synchronized MvTable create(final MvSchema schema) {
        if (byName.containsKey(schema.name()) || byId.containsKey(schema.id())) {
            throw new IllegalArgumentException("multi-version table " + schema.name() + " (id " + schema.id()
                + ") already exists on memory node " + nic.node());
        }
        final long capacity = schema.table().capacity();
        final boolean hash = schema.table().index() == IndexKind.HASH;
        final int buckets = hash ? HashIndexLayout.bucketsFor(capacity, HashIndexLayout.DEFAULT_SLOTS_PER_RECORD) : 0;
        final long indexBytes = hash ? (long) buckets * HashIndexLayout.BUCKET_BYTES
            : SkipListLayout.regionBytesFor(capacity);
        final long versionBytes = schema.table().versionCapacity() * VersionLayout.slotBytes(schema.maxValueBytes());
        final List<MemoryRegion> registered = new ArrayList<>();
        try {
            final MemoryRegion objects = register(schema.name() + ".mv-objects", capacity * schema.objectBytes(),
                registered);
            final MemoryRegion index = register(schema.name() + ".mv-index", indexBytes, registered);
            final MemoryRegion versions = versionBytes == 0 ? null
                : register(schema.name() + ".mv-versions", versionBytes, registered);
            final MvTable table = new MvTable(schema, objects, index, versions, buckets);
            byName.put(schema.name(), table);
            byId.put(schema.id(), table);
            return table;
        } catch (final FabricException e) {
            registered.forEach(nic::deregister);
            throw new IllegalArgumentException("multi-version table " + schema.name() + " does not fit: "
                + e.getMessage(), e);
        }
    }

    private MemoryRegion register(final String name, final long bytes, final List<MemoryRegion> registered) {
        final MemoryRegion region = nic.register(name, bytes, MemoryKind.HOST);
        registered.add(region);
        return region;
    }

    public MvTable table(final String name) {
        return byName.get(name);
    }

    public MvTable table(final int id) {
        return byId.get(id);
    }

    public Collection<MvTable> tables() {
        return List.copyOf(byName.values());
    }

    /** Reclaims, in every table, what no read at {@code horizon} or later can see ({@link MvTable#reclaim}). */
    public long reclaim(final long horizon) {
        long freed = 0;
        for (final MvTable table : byName.values()) {
            freed += table.reclaim(horizon);
        }
        return freed;
    }

    /**
     * Reclaims below the horizon the compute nodes announced on {@code board}, or {@code whenIdle} when none has a
     * live transaction (see {@link HorizonBoard}).
     */
    public long reclaim(final HorizonBoard board, final long whenIdle) {
        return reclaim(board.horizon(whenIdle));
    }
}
