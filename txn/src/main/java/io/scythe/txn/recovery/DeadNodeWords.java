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
     * CAS (retried against a word that changed meanwhile); returns how many words changed.
     */
    public static int rewrite(final LogDb db, final int offset,
                              final Function<Table, java.util.function.LongUnaryOperator> rewriteIn) {
        return rewriteSlots(db, offset, table -> {
            final java.util.function.LongUnaryOperator rewrite = rewriteIn.apply(table);
            return rewrite == null ? null : rewrite::applyAsLong;
        });
    }

    /**
     * A {@link #rewriteSlots} step: the word that claims a slot, then (only once the claim's CAS landed) what it
     * writes of the slot and the word it leaves.
     */
    @FunctionalInterface
    public interface SlotRewrite {
        /**
         * The word that claims the slot whose word is {@code word} ({@code word} itself: the slot is left alone). No
         * side effect: asked again after a CAS that failed (the word changed meanwhile).
         */
        long claim(long word);

        /**
         * Writes the slot at {@code at} of {@code m}, claimed (its word, {@code word} before, is now
         * {@code claimed}: the step's alone); returns the word to leave. By default none: the claim is the rewrite.
         */
        default long rewrite(final AtomicBuffer m, final int at, final long word, final long claimed) {
            return claimed;
        }
    }

    /**
     * The one walk over object slots (by the table's own slot size, the protocol's room included) of the memory
     * nodes' dead-node steps: in every table of {@code db} for which {@code rewriteIn} gives a step ({@code null}: the
     * table is left alone), the word at header offset {@code offset} of each object slot is CASed to the step's
     * claim (retried against a word that changed meanwhile, the claim asked again); once it landed, the step writes
     * the slot and the word is CASed from the claim to what it leaves. A step that writes more of a slot than the word
     * (SELCC's burial of a dead node's locked inserts) claims it first with a word no transaction holds: it writes
     * only a slot it won, and once. Returns how many slots were claimed.
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
                    final long claimed = rewrite.claim(word);
                    if (claimed == word) {
                        break;
                    }
                    if (m.compareAndSetLong(at + offset, word, claimed)) {
                        final long left = rewrite.rewrite(m, at, word, claimed);
                        if (left != claimed && !m.compareAndSetLong(at + offset, claimed, left)) {
                            throw new IllegalStateException("the word at " + (at + offset) + " of table "
                                + table.schema().name() + " changed while a dead-node step held it");
                        }
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
