package io.scythe.txn;

import io.scythe.storage.ObjectLayout;
import org.agrona.concurrent.UnsafeBuffer;

/** One object a transaction attempt touched: where it is, what it read, what it will write, what it holds. */
public final class Access {
    public final String table;
    public final long key;
    public final Catalog.Partition partition;
    public long pointer;
    /** The object as last READ: header, then value. */
    public UnsafeBuffer image;
    public long readVersion;
    public int valueLength;
    public UnsafeBuffer newValue;
    public int newLength;
    public boolean dirty;
    /** A lock on it is held (the protocol's: FORD's CAS lock, a Takeout Lock grant). */
    public boolean locked;
    /** Its release is part of the write-back being posted. */
    public boolean releasing;
    /** Its image holds a READ of this attempt. */
    public boolean fetched;
    /** What the protocol needs to release the lock it holds on it (Scythe: its Takeout grant), or null. */
    public Object held;
    /** Its image shows a delete: reads of it are "not found", and validation checks it stays deleted. */
    public boolean deleted;
    /** This attempt deletes it (dirty: locked at commit; the write-back marks it deleted). */
    public boolean deleting;
    /** This attempt inserts it over a delete it read: the write-back writes the value and clears the flag. */
    public boolean reviving;
    /** Created by this attempt's INSERT RPC, locked by it: the write-back installs the version and releases it. */
    public boolean inserted;
    /**
     * Created by this attempt one-sided (Lotus's inserts, helper lotusins) in an object slot the memory node granted
     * and outside its index until the commit writes the index slot: the primary's home is a placeholder (deleted,
     * empty) as a backup's is, so the write-back writes it whole ({@code WriteSet#addWrites}), and an abort has no
     * INSERT to abandon on the memory node. Lotus sets it on a revived key too (not {@link #inserted}: its home may be
     * a placeholder, LotusTxn#wholeHomesOfRevivals), so that a write-back writing no homes writes that one whole.
     */
    public boolean placeholderHome;
    /**
     * What this attempt read of it was no live value: the key absent from the index, its object deleted, or (for an
     * object this attempt inserted) the state its INSERT replaced. {@link #readVersion} then bounds the version seen
     * from above: the version read is the newest committed one at or below it (versions of a key only grow, and the
     * uncommitted ones an aborted insert left are not read).
     */
    public boolean readAbsent;
    /**
     * The version the write-back installed on it (0 until then): above the commit's version and above the version
     * under the lock ({@link #readVersion}, which the lock kept current), so a key's versions strictly increase in the
     * order they are installed, whatever path installs them.
     */
    public long installedVersion;
    /**
     * The attempt's one fetch of this object in flight or done (a READ, or a lock then a READ): concurrent operations
     * of one attempt on one key share it, so they neither queue twice on its lock nor CAS against themselves.
     */
    public io.vertx.core.Future<Access> fetch;
    /**
     * Where it is on each backup copy of its partition (replication: {@link Catalog.Partition#backups}, in backup
     * order), once located; {@code null} before, and without backups.
     */
    public long[] backupPointers;
    /** Locating it on its backups ({@code onesided.Replicas}), in flight or done; {@code null} until asked. */
    public io.vertx.core.Future<Void> backupsLocated;

    /**
     * The buffer an attempt's {@code onesided.BufferPool} lent for {@link #image} (null: none), given back once the
     * attempt committed, if the access still holds it.
     */
    public UnsafeBuffer pooledImage;
    /** The same for {@link #newValue}: the pool's buffer lent for it (null: none), given back as {@link #pooledImage}. */
    public UnsafeBuffer pooledNewValue;
    /**
     * The write-back's source words of it (version at 0, value length at 8, flags at 12: the same on every copy), lent
     * by the attempt's {@code onesided.BufferPool} and given back with its other buffers; null: each write-back verb
     * gets a buffer of its own ({@code WriteSet.addWrites}).
     */
    public UnsafeBuffer writeWords;

    public Access(final String table, final long key, final Catalog.Partition partition) {
        this.table = table;
        this.key = key;
        this.partition = partition;
    }

    /** Whether no transaction writes its table: read without concurrency control, never validated. */
    public boolean readOnlyTable() {
        return partition.descriptor().schema().readOnly();
    }

    public long address() {
        return ObjectLayout.addressOf(pointer);
    }

    public int rkey() {
        return partition.descriptor().objects().rkey();
    }

    public int slotBytes() {
        return partition.descriptor().objectSlotBytes();
    }

    public long version() {
        return image.getLong(ObjectLayout.VERSION_OFFSET);
    }

    /** The value as read, as a view (valid for the attempt). */
    public UnsafeBuffer value() {
        return new UnsafeBuffer(image, ObjectLayout.VALUE_OFFSET, valueLength);
    }
}
