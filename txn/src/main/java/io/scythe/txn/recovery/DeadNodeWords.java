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
        return rewrite(db, offset, table -> {
            final LongPredicate dead = deadIn.apply(table);
            return dead == null ? null : word -> word != 0 && dead.test(word) ? 0 : word;
        });
    }

    /**
     * Rewrites, in every table of {@code db} for which {@code rewriteIn} gives a function ({@code null}: the table is
     * left alone), the word at header offset {@code offset} of each object slot to what the function makes of it, by
     * CAS (retried against a word that changed meanwhile); returns how many words changed. The one walk over object
     * slots (by the table's own slot size, the protocol's room included) of the memory nodes' dead-node steps.
     */
    public static int rewrite(final LogDb db, final int offset,
                              final Function<Table, java.util.function.LongUnaryOperator> rewriteIn) {
        return rewriteSlots(db, offset, table -> {
            final java.util.function.LongUnaryOperator rewrite = rewriteIn.apply(table);
            return rewrite == null ? null : (m, at, word) -> rewrite.applyAsLong(word);
        });
    }

    /** What a {@link #rewriteSlots} step makes of the word of the slot at {@code at} of {@code m}. */
    @FunctionalInterface
    public interface SlotRewrite {
        long apply(AtomicBuffer m, int at, long word);
    }

    /**
     * {@link #rewrite}, the function also told the slot (its object memory and offset): for a step that writes more
     * of a slot than the word, before the word's CAS (SELCC's burial of a dead node's locked inserts).
     */
    public static int rewriteSlots(final LogDb db, final int offset, final Function<Table, SlotRewrite> rewriteIn) {
        int changed = 0;
        for (final Table table : db.tables()) {
            final SlotRewrite rewrite = rewriteIn.apply(table);
            if (rewrite == null) {
                continue;
            }
            final AtomicBuffer m = table.objectMemory();
            final int slot = table.objectSlotBytes();
            for (int at = 0; at + slot <= m.capacity(); at += slot) {
                while (true) {
                    final long word = m.getLongVolatile(at + offset);
                    final long next = rewrite.apply(m, at, word);
                    if (next == word) {
                        break;
                    }
                    if (m.compareAndSetLong(at + offset, word, next)) {
                        changed++;
                        break;
                    }
                }
            }
        }
        return changed;
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
