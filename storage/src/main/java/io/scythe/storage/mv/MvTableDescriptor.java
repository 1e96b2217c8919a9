package io.scythe.storage.mv;

import io.scythe.fabric.RemoteRegion;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.VersionLayout;

/**
 * Where a multi-version table's data is on its memory node: what a compute node needs to reach it with one-sided
 * verbs. {@code versions} is {@code null} when the table keeps no overflow versions.
 */
public record MvTableDescriptor(MvSchema schema, RemoteRegion objects, RemoteRegion index, RemoteRegion versions,
                                int hashBuckets) {

    /** Bytes of one object: what one READ fetches. */
    public int objectBytes() {
        return schema.objectBytes();
    }

    /** Bytes of one overflow record (a {@link VersionLayout} record). */
    public int versionRecordBytes() {
        return VersionLayout.slotBytes(schema.maxValueBytes());
    }

    /**
     * The table's index and version log as a LogDB {@link TableDescriptor}: the index has LogDB's layout, so
     * {@code RemoteTable}'s one-sided lookups (hash bucket probes, skip-list walks) serve multi-version tables too.
     * Its object layout is not LogDB's: use it for lookups only.
     */
    public TableDescriptor indexDescriptor() {
        return new TableDescriptor(schema.table(), objects, index, versions, hashBuckets);
    }
}
