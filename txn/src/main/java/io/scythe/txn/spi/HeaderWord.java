package io.scythe.txn.spi;

import io.scythe.storage.ObjectFormat;
import io.scythe.storage.ObjectLayout;

/**
 * A word a protocol module keeps in every object's header ({@link ObjectLayout}), declared so that the registry can
 * refuse two modules whose words overlap: every memory node runs every module's services on the same objects. A
 * module may claim only the protocol part of the header, bytes {@code [0, VERSION_OFFSET)} and the protocol word at
 * {@link ObjectLayout#PROTOCOL_WORD_OFFSET}; the version, chain, length, flags and incarnation are shared. Two
 * modules that share a lock declare the same word (same name, offset and size).
 * <p>
 * The protocol word ({@link #PROTOCOL_WORD}) is the exception: one 8-byte word that any module may use for its own
 * per-object state (RCC WAIT-DIE's {@code tts}, SELCC's latch word), declared by all of them under that one name.
 * A cluster, a bench run or a simulated run runs one protocol at a time on its objects, and every module's probe and
 * service touches the word only for its own protocol's requests, so its meanings never meet; the lock area's words
 * stay apart because FORD's and Scythe's services are exercised by recovery and reclamation whatever runs.
 */
public record HeaderWord(String name, int offset, int bytes) {
    /** The per-protocol word at {@link ObjectLayout#PROTOCOL_WORD_OFFSET}, shared by name by the modules using it. */
    public static final HeaderWord PROTOCOL_WORD = new HeaderWord("protocol_word", ObjectLayout.PROTOCOL_WORD_OFFSET, 8);

    public HeaderWord {
        new ObjectFormat.Word(name, offset, bytes); // refuses a word outside the protocol part of the header
    }

    /** The word as a table's storage format lists it ({@link ObjectFormat}). */
    public ObjectFormat.Word word() {
        return new ObjectFormat.Word(name, offset, bytes);
    }

    /** An 8-byte word. */
    public static HeaderWord of(final String name, final int offset) {
        return new HeaderWord(name, offset, 8);
    }

    /** Whether it shares a byte with {@code other}. */
    public boolean overlaps(final HeaderWord other) {
        return word().overlaps(other.word());
    }
}
