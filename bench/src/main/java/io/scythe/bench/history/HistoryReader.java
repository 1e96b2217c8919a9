package io.scythe.bench.history;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads a history file ({@link HistoryFormat}) into a {@link History}. A file that is not a history, is cut short
 * (no END record), or contradicts itself (an unknown record type, an undefined table, a count that does not match)
 * is refused with an {@link IllegalArgumentException} that says where.
 */
public final class HistoryReader {
    private final InputStream in;
    private final String name;
    private final byte[] buffer = new byte[1 << 16];
    private int position;
    private int limit;
    private long consumed;

    private HistoryReader(final InputStream in, final String name) {
        this.in = in;
        this.name = name;
    }

    public static History read(final Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new HistoryReader(in, file.toString()).history();
        }
    }

    public static History read(final InputStream in, final String name) throws IOException {
        return new HistoryReader(in, name).history();
    }

    private History history() throws IOException {
        final byte[] magic = new byte[HistoryFormat.MAGIC.length];
        for (int i = 0; i < magic.length; i++) {
            if (!fill()) {
                throw bad("not a history file (too short for the magic)");
            }
            magic[i] = buffer[position++];
            consumed++;
        }
        final boolean v2 = Arrays.equals(magic, HistoryFormat.MAGIC);
        if (!v2 && !Arrays.equals(magic, HistoryFormat.MAGIC_V1)) {
            throw bad("not a history file (no SCYHIST magic, or a format version other than 1 and 2)");
        }
        final int flagBits = v2 ? HistoryFormat.FLAG_BITS : HistoryFormat.FLAG_BITS_V1;
        if (readByte() != HistoryFormat.HEADER) {
            throw bad("the first record is not the header");
        }
        final long initialVersion = varint();
        final String label = string();
        final History.Builder builder = v2 ? History.builder(initialVersion, label)
            : History.chainBuilder(initialVersion, label);
        long declaredEnd = -1;
        while (fill()) {
            final long at = consumed;
            final int type = readByte();
            switch (type) {
                case HistoryFormat.TABLE:
                    builder.table(checkedInt(varint(), "table id"), string());
                    break;
                case HistoryFormat.TXN:
                case HistoryFormat.RC_TXN:
                case HistoryFormat.DOUBT: {
                    final long seq = varint();
                    builder.txn(varint(), seq, varint());
                    if (type == HistoryFormat.DOUBT) {
                        builder.inDoubt();
                    }
                    if (type == HistoryFormat.RC_TXN) {
                        builder.readCommitted();
                    }
                    final long count = varint();
                    for (long i = 0; i < count; i++) {
                        final long head = varint();
                        final int flags = (int) (head & ((1 << flagBits) - 1));
                        final int table = checkedInt(head >>> flagBits, "table id");
                        final long key = varint();
                        final long read = (flags & HistoryFormat.READ) != 0 ? varint() : 0;
                        long made = 0;
                        long overwritten = 0;
                        if ((flags & HistoryFormat.WRITE) != 0) {
                            made = varint();
                            overwritten = v2 ? 0 : varint();
                        }
                        try {
                            builder.access(table, flags, key, read, made, overwritten);
                        } catch (final IllegalArgumentException e) {
                            throw bad("transaction record at byte " + at + ": " + e.getMessage());
                        }
                    }
                    break;
                }
                case HistoryFormat.END:
                    declaredEnd = varint();
                    if (fill()) {
                        throw bad("bytes after the END record at " + at);
                    }
                    break;
                default:
                    throw bad("unknown record type " + type + " at byte " + at);
            }
        }
        final History history = builder.build();
        if (declaredEnd < 0) {
            throw bad("cut short: no END record after " + history.transactions() + " transactions");
        }
        if (declaredEnd != history.transactions()) {
            throw bad("the END record counts " + declaredEnd + " transactions, the file has "
                + history.transactions());
        }
        return history;
    }

    private boolean fill() throws IOException {
        if (position < limit) {
            return true;
        }
        limit = in.read(buffer, 0, buffer.length);
        position = 0;
        if (limit <= 0) {
            limit = 0;
            return false;
        }
        return true;
    }

    private int readByte() throws IOException {
        if (!fill()) {
            throw bad("cut short in the middle of a record");
        }
        consumed++;
        return buffer[position++] & 0xff;
    }

    private long varint() throws IOException {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            final int b = readByte();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw bad("a varint longer than 10 bytes at byte " + consumed);
    }

    private String string() throws IOException {
        final int length = checkedInt(varint(), "string length");
        if (length > 1 << 20) {
            throw bad("a string of " + length + " bytes at byte " + consumed);
        }
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) readByte();
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private int checkedInt(final long value, final String what) {
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw bad(what + " " + Long.toUnsignedString(value) + " out of range at byte " + consumed);
        }
        return (int) value;
    }

    private IllegalArgumentException bad(final String what) {
        return new IllegalArgumentException(name + ": " + what);
    }
}
