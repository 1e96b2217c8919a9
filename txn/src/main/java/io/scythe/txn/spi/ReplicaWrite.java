package io.scythe.txn.spi;

import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;

/**
 * How a rejoining copy's re-replication ({@code recovery.ReReplicator}) writes one key onto the new copy, its W step,
 * for a module whose commits lock no object header ({@link ProtocolModule#replicaWrite}): the primary's object as the
 * copier read it (its version, whether it is deleted, its value), written so that a write of a newer commit that
 * reached the copy meanwhile is never overwritten (Aurogon: the APPLY rule, by version on the copy's own loop). The
 * copier's verification (the primary's version again after the write) is unchanged.
 */
@FunctionalInterface
public interface ReplicaWrite {
    /** Writes {@code key}'s image ({@code length} bytes of {@code value}; none when {@code deleted}) onto {@code copy}. */
    Future<Void> write(TxnRuntime runtime, Catalog.Replica copy, long key, long version, boolean deleted,
                       DirectBuffer value, int length);

    /**
     * Whether {@code key} of the primary {@code partition} has a write under way the object does not show (R1 treats
     * it as locked: read again after a pause); the default: none (a header-locked write shows in the object).
     * Aurogon: a version pending in the primary's participant (its commit, in doubt or by a dead coordinator, writes
     * no rejoining copy when a recovery or a coordinator of an older configuration decides it).
     */
    default Future<Boolean> unsettled(TxnRuntime runtime, Catalog.Partition partition, long key) {
        return Future.succeededFuture(false);
    }
}
