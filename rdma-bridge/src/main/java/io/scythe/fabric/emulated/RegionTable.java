package io.scythe.fabric.emulated;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import org.agrona.BufferUtil;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The regions of one node held in this JVM's off-heap memory ({@link DirectRegion}): registration with random,
 * never-reused keys and a device-memory budget, and a copy-on-write rkey table that verbs read without locking.
 */
public final class RegionTable {
    public static final int MAX_REGION_BYTES = Integer.MAX_VALUE - 8;

    private final String node;
    private final CostModel model;
    private final KeyAndAddressAllocator keys = new KeyAndAddressAllocator();
    private final Map<String, DirectRegion> byName = new ConcurrentHashMap<>();
    private volatile Int2ObjectHashMap<DirectRegion> byKey = new Int2ObjectHashMap<>();
    private long deviceBytes;

    public RegionTable(final String node, final CostModel model) {
        this.node = node;
        this.model = model;
    }

    public synchronized DirectRegion register(final String name, final long length, final MemoryKind kind) {
        FabricOptions.checkName("region", name);
        if (length <= 0 || length > MAX_REGION_BYTES) {
            throw new FabricException("region " + name + "@" + node + ": length=" + length
                + " must be within [1, " + MAX_REGION_BYTES + "]");
        }
        if (byName.containsKey(name)) {
            throw new FabricException("region " + name + " is already registered on node " + node);
        }
        if (kind == MemoryKind.DEVICE) {
            if (deviceBytes + length > model.deviceMemoryBytes()) {
                throw new FabricException("region " + name + "@" + node + ": NIC device memory exhausted ("
                    + deviceBytes + " of " + model.deviceMemoryBytes() + " bytes used, " + length + " asked)");
            }
            deviceBytes += length;
        }
        final int rkey = keys.nextKey();
        final DirectRegion region = new DirectRegion(name, node, keys.nextAddress(length), length, rkey,
            keys.nextKey(), kind, new UnsafeBuffer(BufferUtil.allocateDirectAligned((int) length, 4096)));
        byName.put(name, region);
        final Int2ObjectHashMap<DirectRegion> copy = new Int2ObjectHashMap<>(byKey);
        copy.put(rkey, region);
        byKey = copy;
        return region;
    }

    public synchronized void deregister(final MemoryRegion region) {
        if (!(region instanceof DirectRegion) || byName.get(region.name()) != region) {
            throw new FabricException("region " + region.name() + " is not registered on node " + node);
        }
        ((DirectRegion) region).deregistered();
        byName.remove(region.name());
        final Int2ObjectHashMap<DirectRegion> copy = new Int2ObjectHashMap<>(byKey);
        copy.remove(region.rkey());
        byKey = copy;
        if (region.kind() == MemoryKind.DEVICE) {
            deviceBytes -= region.length();
        }
    }

    /** The region registered under {@code rkey}, or {@code null}; lock-free. */
    public DirectRegion byKey(final int rkey) {
        return byKey.get(rkey);
    }

    public MemoryRegion byName(final String name) {
        return byName.get(name);
    }

    public Collection<MemoryRegion> all() {
        return List.copyOf(byName.values());
    }

    public void deregisterAll() {
        for (final MemoryRegion region : all()) {
            deregister(region);
        }
    }
}
