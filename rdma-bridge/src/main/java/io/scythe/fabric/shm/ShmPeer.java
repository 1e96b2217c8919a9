package io.scythe.fabric.shm;

import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.emulated.EmulatedPeer;
import io.scythe.fabric.emulated.NicTimeline;
import io.scythe.fabric.emulated.RegionView;
import org.agrona.concurrent.NanoClock;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static io.scythe.fabric.shm.ShmLayout.*;

/**
 * Another node on the shm fabric as this process sees it: its control file mapped, and its regions mapped on first
 * use and cached by rkey. A cached region is re-checked against the owner's table on every verb
 * ({@link ShmRegion#isRegistered()}), so deregistration is seen at once.
 */
final class ShmPeer implements EmulatedPeer {
    private final String node;
    final ShmNodeFile file;
    private final Map<Integer, ShmRegion> regions = new ConcurrentHashMap<>();

    private final DriftingClock nicClock;

    ShmPeer(final String node, final ShmNodeFile file, final NanoClock trueClock) {
        this.node = node;
        this.file = file;
        this.nicClock = file.nicClock(trueClock);
    }

    @Override
    public DriftingClock nicClock() {
        return nicClock;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public NicTimeline timeline() {
        return file.timeline;
    }

    @Override
    public RegionView region(final int rkey) {
        final ShmRegion cached = regions.get(rkey);
        if (cached != null) {
            return cached;
        }
        final int slot = file.findRegion(rkey);
        if (slot < 0) {
            return null;
        }
        final int at = file.regionEntry(slot);
        final Path path = file.dir.resolve(ShmNic.regionFile(rkey));
        try {
            final ShmRegion region = new ShmRegion(file, slot, file.name(at + REGION_NAME), node,
                file.memory.getLong(at + REGION_ADDRESS), file.memory.getLong(at + REGION_LENGTH), rkey,
                file.memory.getInt(at + REGION_LKEY),
                file.memory.getInt(at + REGION_KIND) == 1 ? MemoryKind.DEVICE : MemoryKind.HOST,
                MappedFiles.open(path), path);
            if (region.buffer().capacity() != region.length()) {
                return null;
            }
            regions.put(rkey, region);
            return region;
        } catch (final IOException e) {
            return null; // deregistered (file deleted) between the table read and the open
        }
    }
}
