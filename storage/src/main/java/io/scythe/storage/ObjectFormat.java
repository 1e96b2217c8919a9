package io.scythe.storage;

import org.agrona.concurrent.AtomicBuffer;

import java.util.List;

/**
 * The storage format of one table's objects, as the protocol run on it supplies it (its module, per table): the
 * protocol words its objects carry in the protocol part of the header ({@link ObjectLayout}: the lock area, bytes
 * {@code [0, VERSION_OFFSET)}, and the protocol word), and only those. The shared words (version, chain, value
 * length, flags, incarnation) are in every format.
 *
 * <p>Storage lays every format out in {@link ObjectLayout}'s 64-byte header: a word a format leaves out keeps its
 * bytes, zero and unused (the header is not sized per table yet: its offsets are constants throughout the fabric-side
 * code; a smaller header for a format without the lock area is the storage's next step). What a format does today is
 * say which words are the table's: the end-of-run probes of a table ask only the modules whose words its format
 * carries, and {@link #strayWord} finds a word outside it that something wrote (the simulator checks every table
 * at the end of a run).
 */
public record ObjectFormat(String name, List<Word> words) {
    /** A protocol word of the header: {@code bytes} at {@code offset}, in the protocol part of the header. */
    public record Word(String name, int offset, int bytes) {
        public Word {
            final boolean lockArea = offset >= 0 && offset + bytes <= ObjectLayout.VERSION_OFFSET;
            final boolean protocolWord = offset >= ObjectLayout.PROTOCOL_WORD_OFFSET
                && offset + bytes <= ObjectLayout.PROTOCOL_WORD_OFFSET + 8;
            if (bytes <= 0 || !(lockArea || protocolWord)) {
                throw new IllegalArgumentException("header word " + name + " at " + offset + " of " + bytes
                    + " bytes is outside the protocol part of the header ([0, " + ObjectLayout.VERSION_OFFSET
                    + ") and " + ObjectLayout.PROTOCOL_WORD_OFFSET + "..+8)");
            }
        }

        /** Whether it shares a byte with {@code other}. */
        public boolean overlaps(final Word other) {
            return offset < other.offset + other.bytes && other.offset < offset + bytes;
        }
    }

    /** The words of the protocol part of the header, each 8 bytes: what {@link #strayWord} reads. */
    private static final int[] PROTOCOL_PART = {ObjectLayout.LOWER_OFFSET, ObjectLayout.UPPER_OFFSET,
        ObjectLayout.QUEUED_TS_OFFSET, ObjectLayout.CAS_LOCK_OFFSET, ObjectLayout.PROTOCOL_WORD_OFFSET};

    /**
     * Every protocol word of {@link ObjectLayout}: the Takeout Lock's three words, the CAS lock and the protocol word.
     * The format of a table no module described (a micro workload's, a test's), and the one format that Scythe,
     * FORD and FaRM share (their modules declare it: their fingerprints are byte-identical to the one-layout code).
     */
    public static final ObjectFormat FULL = new ObjectFormat("full", List.of(new Word("lower",
        ObjectLayout.LOWER_OFFSET, 8), new Word("upper", ObjectLayout.UPPER_OFFSET, 8), new Word("queued_ts",
        ObjectLayout.QUEUED_TS_OFFSET, 8), new Word("cas_lock", ObjectLayout.CAS_LOCK_OFFSET, 8),
        new Word("protocol_word", ObjectLayout.PROTOCOL_WORD_OFFSET, 8)));

    public ObjectFormat {
        words = List.copyOf(words);
        for (int i = 0; i < words.size(); i++) {
            for (int j = i + 1; j < words.size(); j++) {
                if (words.get(i).overlaps(words.get(j))) {
                    throw new IllegalArgumentException("format " + name + ": words " + words.get(i) + " and "
                        + words.get(j) + " overlap");
                }
            }
        }
    }

    /** Whether it carries a word that shares a byte with {@code word}. */
    public boolean carries(final Word word) {
        for (final Word w : words) {
            if (w.overlaps(word)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The first object of {@code table} with a word outside the table's format written ({@link #strayWord}), as
     * "table@offset: word = value", or null; nothing to look for in a {@link #FULL} table.
     */
    public static String strayIn(final Table table) {
        final ObjectFormat format = table.format();
        if (format.words().size() == FULL.words().size() && format.carries(FULL)) {
            return null;
        }
        final int slot = table.objectSlotBytes();
        final AtomicBuffer memory = table.objectMemory();
        final int[] uncarried = format.uncarriedProtocolWords();
        for (long at = 0; at + slot <= memory.capacity(); at += slot) {
            final String stray = strayWord(uncarried, memory, (int) at);
            if (stray != null) {
                return table.schema().name() + "@" + at + ": " + stray;
            }
        }
        return null;
    }

    /**
     * The offsets of {@link #PROTOCOL_PART}'s words this format does not carry, in that order: what {@link #strayWord}
     * reads. Found once per table by {@link #strayIn}, not per object (issue 23 §3: a Word and its name built per word
     * of every object at the end of each simulated run were a sixth of a seed sweep's CPU).
     */
    private int[] uncarriedProtocolWords() {
        return java.util.Arrays.stream(PROTOCOL_PART).filter(offset -> !carries(new Word("word@" + offset, offset, 8)))
            .toArray();
    }

    private static String strayWord(final int[] uncarried, final AtomicBuffer memory, final int header) {
        for (final int offset : uncarried) {
            final long value = memory.getLongVolatile(header + offset);
            if (value != 0) {
                return "word@" + offset + " = " + value;
            }
        }
        return null;
    }

    /** Whether it carries every word of {@code other}. */
    public boolean carries(final ObjectFormat other) {
        for (final Word w : other.words) {
            if (!words.contains(w)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The first 8-byte word of the protocol part of the header at {@code header} of {@code memory} that this format
     * does not carry and that is not zero (something wrote a word the table's protocol does not have), or null.
     */
    public String strayWord(final AtomicBuffer memory, final int header) {
        return strayWord(uncarriedProtocolWords(), memory, header);
    }
}
