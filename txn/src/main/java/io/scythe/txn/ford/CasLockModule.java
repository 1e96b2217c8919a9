package io.scythe.txn.ford;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.HeaderWord;
import io.scythe.txn.spi.LockKind;
import io.scythe.txn.spi.MemoryNodeContext;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * What a module whose protocols lock with the CAS word brings besides its protocols: the lock kind its redo records
 * name, the memory-node step that frees a dead compute node's words, and the end-of-run probe. FORD's and FaRM's
 * modules share it; the step runs once per memory node however many of them are registered (one name, one step).
 */
public abstract class CasLockModule implements ProtocolModule {
    /** Replication is checked for it: ReplicationSimTest (every backup identical to its primary). */
    @Override
    public boolean replicates() {
        return true;
    }

    @Override
    public void startMemoryNode(final MemoryNodeContext node) {
        node.onDeadNode(MemoryNodeContext.Phase.AFTER_INSERTS, CasWords.COUNTED, (dead, idPrefixes) ->
            idPrefixes.length == 0 ? 0 : CasWords.free(node.db(), idPrefixes));
    }

    @Override
    public List<LockKind> lockKinds() {
        return List.of(CasLockKind.INSTANCE);
    }

    /** The CAS lock word (package doc). */
    /**
     * FORD's and FaRM's tables have the full header ({@link io.scythe.storage.ObjectFormat#FULL}), the one format
     * they share with Scythe ({@code ScytheModule#objectFormat} says why).
     */
    @Override
    public final io.scythe.storage.ObjectFormat objectFormat(final io.scythe.txn.Protocol protocol,
                                                           final io.scythe.storage.TableSchema schema) {
        return io.scythe.storage.ObjectFormat.FULL;
    }

    @Override
    public final List<HeaderWord> headerWords() {
        return List.of(HeaderWord.of("cas_lock", ObjectLayout.CAS_LOCK_OFFSET));
    }

    @Override
    public final ObjectProbe probe() {
        return CasWords::locked;
    }
}
