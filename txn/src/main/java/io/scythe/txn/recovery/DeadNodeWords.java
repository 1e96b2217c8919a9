package io.scythe.txn.recovery;

import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import org.agrona.concurrent.AtomicBuffer;

import java.util.function.Function;
import java.util.function.LongPredicate;

/**
 * What the memory-node dead-node steps that free lock words share ({@code ford.CasWords}: the CAS word;
 * {@code rcc.DeadWords}: RCC's protocol word): a scan of every object slot of the tables, as such words are taken
 * one-sided and recorded nowhere, CASing each word the dead node holds to 0 (never a blind WRITE: a live node may
 * take it meanwhile), and the match of a transaction id against the dead node's id prefixes.
 */
public final class DeadNodeWords {
    private DeadNodeWords() {
    }

    /**
     * Frees, in every table of {@code db} for which {@code deadIn} gives a test ({@code null}: the table is left
     * alone), the word at header offset {@code offset} of each object slot when it is not 0 and the test says the
     * dead node holds it; returns how many were freed.
     */
    public static int free(final LogDb db, final int offset, final Function<Table, LongPredicate> deadIn) {
        int freed = 0;
        for (final Table table : db.tables()) {
            final LongPredicate dead = deadIn.apply(table);
            if (dead == null) {
                continue;
            }
            final AtomicBuffer m = table.objectMemory();
            final int slot = table.objectSlotBytes();
            for (int at = 0; at + slot <= m.capacity(); at += slot) {
                final long word = m.getLongVolatile(at + offset);
                if (word != 0 && dead.test(word) && m.compareAndSetLong(at + offset, word, 0)) {
                    freed++;
                }
            }
        }
        return freed;
    }

    /** Whether transaction id {@code id} is of a node one of {@code idPrefixes} names ({@link RecoveryRpc#NODE_ID_MASK}). */
    public static boolean ownedBy(final long[] idPrefixes, final long id) {
        final long node = id & RecoveryRpc.NODE_ID_MASK;
        for (final long prefix : idPrefixes) {
            if ((prefix & RecoveryRpc.NODE_ID_MASK) == node) {
                return true;
            }
        }
        return false;
    }
}
