package io.scythe.txn.ford;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.recovery.DeadNodeWords;
import io.scythe.txn.recovery.RecoveryRpc;

/** The memory-node side of the CAS lock word: freeing a dead compute node's words, and the end-of-run probe. */
public final class CasWords {
    /** What recovery reports the freed words as. */
    public static final String COUNTED = "casWords";

    private CasWords() {
    }

    /** Whether the object at {@code header} of {@code table}'s memory has its CAS word taken. */
    public static boolean locked(final Table table, final int header) {
        return table.objectMemory().getLongVolatile(header + ObjectLayout.CAS_LOCK_OFFSET) != 0;
    }

    /**
     * Frees every CAS lock word that carries a transaction id of the dead node ({@code owners}: its id prefixes,
     * {@link RecoveryRpc#NODE_ID_MASK}): a scan of every object slot, as CAS locks are taken one-sided and recorded
     * nowhere ({@link DeadNodeWords}). Inserts it left locked were abandoned before (their words are gone by then).
     */
    static int free(final LogDb db, final long[] owners) {
        return DeadNodeWords.free(db, ObjectLayout.CAS_LOCK_OFFSET, table -> word -> DeadNodeWords.ownedBy(owners,
            word));
    }
}
