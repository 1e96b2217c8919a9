package io.scythe.txn.rcc.calvin;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * CALVIN's messages between compute nodes (little-endian, Agrona's order): an epoch's batch of declared transactions
 * (dispatch), a participant's records forwarded to the executor, and the executor's writes to an active participant.
 */
final class CalvinWire {
    /**
     * Dispatch, in chunks that fit an RRPC bucket: {@code epoch u64, from u16, chunk u16, chunks u16, count u32,
     * count x txn}; a txn is {@code id u64, origin u16, keys u16, keys x (key, mode u8)}.
     */
    static final int BATCH = 0x5C01;
    /** Forwarding: {@code id u64, n u16, n x (key, status u8, version u64, length u32, value)}. */
    static final int FORWARD = 0x5C02;
    /**
     * Write-back at an active participant, in chunks: {@code id u64, commitTs u64, total u16, n u16, n x (key,
     * kind u8, length u32, value)}; {@code total} counts items, a value too large for one message going in several
     * ({@link #PIECE} set in the kind).
     */
    static final int WRITE = 0x5C03;
    /**
     * The one-sided form's answer to a write chunk, from the active participant to the executor once the chunk is
     * written and the locks released: {@code id u64, ok u8, (when not ok) length u32, why}.
     */
    static final int DONE = 0x5C04;
    /**
     * Write-back at a dead owner's successor, for the dead owner's partitions it took over (issue 18 part 5, more
     * than 2 nodes): a {@link #WRITE}'s payload, applied in the successor's second scheduler, only where not installed.
     */
    static final int TAKEN_WRITE = 0x5C05;
    /** The one-sided form's answer to a {@link #TAKEN_WRITE} chunk, as a {@link #DONE}. */
    static final int TAKEN_DONE = 0x5C06;
    /**
     * A survivor's contribution to a dead owner's rebuilt input at its successor (issue 18 part 5 (c)), once, in
     * chunks: {@code dead u16, chunk u16, chunks u16, count u32, count x (orderTs u64, id u64, origin u16, keys u16,
     * keys x (key, flags u8))}, flags bit 0 written, bit 1 its record still awaited by the executor; a transaction too
     * large for one message in several of the same id, adjacent. Empty (one chunk of none) when it owes nothing.
     */
    static final int OWED = 0x5C07;
    /**
     * Restart (issue 18): a dead node's new incarnation asks a live node to let it into the total order again (an
     * RPC, empty; the caller's peer name is the new incarnation's). Answered, once that node took the old incarnation
     * over, {@code floor u64, consumed u64, rpc u8}: its rejoin floor ({@link Epochs#rejoinFloor}), how many of the
     * old incarnation's one-sided messages it consumed ({@link CalvinInbox#drainDead}) and whether it runs the RPC
     * form; failed with {@link #JOIN_NOT_YET} while the take-over is not over there (the joiner asks again).
     */
    static final int JOIN = 0x5C08;
    /** {@link #JOIN}'s failure while the old incarnation is not taken over at the node asked: asked again. */
    static final String JOIN_NOT_YET = "not taken over here yet";

    static final byte FOUND = 0;
    static final byte ABSENT = 1;
    static final byte FAILED = 2;
    /**
     * A piece of a found record too large for one message (TPC-C's 680-byte customer rows in a 472-byte RRPC bucket):
     * its value is {@code total u32, offset u32, bytes}; the executor reassembles the record ({@link Pieces}).
     */
    static final byte PIECE = 3;

    private CalvinWire() {
    }

    /** A key of a table. */
    record Key(String table, long key) {
        @Override
        public String toString() {
            return table + "/" + key;
        }
    }

    /** A transaction as dispatched to one node: its id and the keys of it that node owns (true: written). */
    record Decl(long id, int origin, List<Key> keys, List<Boolean> exclusive) {
    }

    /** A record a participant forwards: its status, version and value. */
    record Record(Key key, byte status, long version, byte[] value) {
    }

    /** An update of an existing key (a write). */
    static final byte UPDATE = 0;
    /** An insert: the owner creates the key (or revives its tombstone). */
    static final byte INSERT = 1;
    /** A delete: the owner makes the key a tombstone. */
    static final byte DELETE = 2;

    /** A writer's change of a key: {@link #UPDATE}, {@link #INSERT} (both with the new value) or {@link #DELETE}. */
    record Write(Key key, byte kind, byte[] value) {
    }

    /** Builds a message. */
    static final class Out {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        int at;

        Out u8(final int v) {
            buffer.putByte(at, (byte) v);
            at += 1;
            return this;
        }

        Out u16(final int v) {
            buffer.putShort(at, (short) v);
            at += 2;
            return this;
        }

        Out u32(final int v) {
            buffer.putInt(at, v);
            at += 4;
            return this;
        }

        Out u64(final long v) {
            buffer.putLong(at, v);
            at += 8;
            return this;
        }

        Out bytes(final byte[] v) {
            u32(v.length);
            buffer.putBytes(at, v);
            at += v.length;
            return this;
        }

        Out key(final Key k) {
            final byte[] name = k.table().getBytes(StandardCharsets.UTF_8);
            u8(name.length);
            buffer.putBytes(at, name);
            at += name.length;
            return u64(k.key());
        }

        UnsafeBuffer done() {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[at]);
            b.putBytes(0, buffer, 0, at);
            return b;
        }
    }

    /** Reads a message. */
    static final class In {
        final DirectBuffer buffer;
        int at;
        final int end;

        /** The payload of a peer's call. */
        static In of(final io.scythe.rrpc.RpcRequest request) {
            return new In(request.payload(), request.payloadOffset(), request.payloadLength());
        }

        In(final DirectBuffer buffer, final int offset, final int length) {
            this.buffer = buffer;
            this.at = offset;
            this.end = offset + length;
        }

        private void need(final int n) {
            if (at + n > end) {
                throw new IllegalArgumentException("truncated CALVIN message: " + n + " bytes needed at " + at
                    + ", " + (end - at) + " left");
            }
        }

        int u8() {
            need(1);
            return buffer.getByte(at++) & 0xff;
        }

        int u16() {
            need(2);
            final int v = buffer.getShort(at) & 0xffff;
            at += 2;
            return v;
        }

        int u32() {
            need(4);
            final int v = buffer.getInt(at);
            at += 4;
            return v;
        }

        long u64() {
            need(8);
            final long v = buffer.getLong(at);
            at += 8;
            return v;
        }

        byte[] bytes() {
            final int n = u32();
            if (n < 0) {
                throw new IllegalArgumentException("CALVIN value length " + n);
            }
            need(n);
            final byte[] v = new byte[n];
            buffer.getBytes(at, v);
            at += n;
            return v;
        }

        Key key() {
            final int n = u8();
            need(n);
            final byte[] name = new byte[n];
            buffer.getBytes(at, name);
            at += n;
            return new Key(new String(name, StandardCharsets.UTF_8), u64());
        }
    }

    /**
     * Bytes of a batch chunk's header: epoch, from, chunk, chunks, the newest epoch complete at the sender (for the
     * input log's low-water mark, {@link Epochs#lowWater}), count.
     */
    static final int BATCH_HEADER = 8 + 2 + 2 + 2 + 8 + 4;
    /** Bytes of a forward message's header: id, count. */
    static final int FORWARD_HEADER = 8 + 2;
    /** Bytes of a write message's header: id, commitTs, total, count. */
    static final int WRITE_HEADER = 8 + 8 + 2 + 2;

    /** Bytes a key takes on the wire. */
    static int keyBytes(final Key k) {
        return 1 + k.table().getBytes(StandardCharsets.UTF_8).length + 8;
    }

    /** Bytes a declared transaction takes in a batch. */
    static int declBytes(final Decl d) {
        int n = 8 + 2 + 2;
        for (final Key k : d.keys()) {
            n += keyBytes(k) + 1;
        }
        return n;
    }

    /** Bytes a write (or a piece of one) takes in a write message. */
    static int writeBytes(final Write w) {
        return keyBytes(w.key()) + 1 + 4 + w.value().length;
    }

    /** Bytes a forwarded record of {@code valueBytes} takes. */
    static int recordBytes(final Key k, final int valueBytes) {
        return keyBytes(k) + 1 + 8 + 4 + valueBytes;
    }

    /**
     * {@code items} in runs that fit messages of {@code limit} bytes with a {@code header} each ({@code bytes}: what an
     * item takes); at least one run (empty when there are no items).
     *
     * @throws IllegalArgumentException when one item alone does not fit
     */
    static <T> List<List<T>> chunks(final List<T> items, final java.util.function.ToIntFunction<T> bytes,
                                    final int header, final int limit,
                                    final java.util.function.Function<T, Object> what) {
        final List<List<T>> chunks = new ArrayList<>();
        List<T> chunk = new ArrayList<>();
        int used = header;
        for (final T item : items) {
            final int n = bytes.applyAsInt(item);
            if (header + n > limit) {
                throw new IllegalArgumentException("CALVIN " + what.apply(item) + " (" + n + " bytes) does not fit "
                    + "an RRPC bucket (" + limit + " bytes)");
            }
            if (used + n > limit) {
                chunks.add(chunk);
                chunk = new ArrayList<>();
                used = header;
            }
            chunk.add(item);
            used += n;
        }
        chunks.add(chunk);
        return chunks;
    }

    /**
     * Node {@code from}'s batch of {@code epoch} as messages of at most {@code limit} bytes (an RRPC bucket), each
     * {@code epoch u64, from u16, chunk u16, chunks u16, count u32, count x txn}; at least one (an empty batch says
     * the epoch is over at {@code from}).
     */
    static List<UnsafeBuffer> batch(final long epoch, final int from, final long completed, final List<Decl> txns,
                                    final int limit) {
        final List<List<Decl>> chunks = chunks(split(txns, limit - BATCH_HEADER), CalvinWire::declBytes, BATCH_HEADER, limit,
            d -> "transaction of " + d.keys().size() + " keys");
        final List<UnsafeBuffer> out = new ArrayList<>(chunks.size());
        for (int c = 0; c < chunks.size(); c++) {
            out.add(decls(new Out().u64(epoch).u16(from).u16(c).u16(chunks.size()).u64(completed), chunks.get(c))
                .done());
        }
        return out;
    }

    /** {@code o} followed by {@code txns} as {@link #readBatch} reads them (count, then each declaration). */
    static Out decls(final Out o, final List<Decl> txns) {
        o.u32(txns.size());
        for (final Decl d : txns) {
            o.u64(d.id()).u16(d.origin()).u16(d.keys().size());
            for (int i = 0; i < d.keys().size(); i++) {
                o.key(d.keys().get(i)).u8(d.exclusive().get(i) ? 1 : 0);
            }
        }
        return o;
    }

    /**
     * {@code txns} with each transaction too large for one message of {@code room} bytes cut into several of the same
     * id, adjacent ({@link #merge} joins them again).
     */
    static List<Decl> split(final List<Decl> txns, final int room) {
        final List<Decl> out = new ArrayList<>(txns.size());
        for (final Decl d : txns) {
            if (declBytes(d) <= room) {
                out.add(d);
                continue;
            }
            int used = 8 + 2 + 2;
            int start = 0;
            for (int i = 0; i < d.keys().size(); i++) {
                final int n = keyBytes(d.keys().get(i)) + 1;
                if (used + n > room && i > start) {
                    out.add(new Decl(d.id(), d.origin(), d.keys().subList(start, i), d.exclusive().subList(start, i)));
                    start = i;
                    used = 8 + 2 + 2;
                }
                used += n;
            }
            out.add(new Decl(d.id(), d.origin(), d.keys().subList(start, d.keys().size()),
                d.exclusive().subList(start, d.keys().size())));
        }
        return out;
    }

    /** A whole batch with the parts of each transaction {@link #split} into several joined again. */
    static List<Decl> merge(final List<Decl> txns) {
        final List<Decl> out = new ArrayList<>(txns.size());
        for (final Decl d : txns) {
            final Decl last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.id() == d.id() && !last.keys().isEmpty() && !d.keys().isEmpty()) {
                final List<Key> keys = new ArrayList<>(last.keys());
                keys.addAll(d.keys());
                final List<Boolean> exclusive = new ArrayList<>(last.exclusive());
                exclusive.addAll(d.exclusive());
                out.set(out.size() - 1, new Decl(d.id(), d.origin(), keys, exclusive));
            } else {
                out.add(d);
            }
        }
        return out;
    }

    /**
     * The separator in a batch between the receiver's own part and dead owner {@code dead}'s part, which the sender
     * routes to the receiver, its successor (issue 18 part 5 (a)): a declaration of no key (no real one has none).
     */
    static Decl routedMarker(final int dead) {
        return new Decl(0, dead, List.of(), List.of());
    }

    /** One transaction of a survivor's {@link #OWED} contribution: its place, its part and the keys still awaited. */
    record Owed(long orderTs, Decl decl, java.util.Set<Key> missing) {
    }

    /** Bytes of an owed message's header: dead, chunk, chunks, count. */
    static final int OWED_HEADER = 2 + 2 + 2 + 4;

    /** A survivor's contribution for dead owner {@code dead} as messages of at most {@code limit} bytes; at least one. */
    static List<UnsafeBuffer> owed(final int dead, final List<Owed> items, final int limit) {
        final List<Owed> pieces = new ArrayList<>();
        for (final Owed o : items) {
            for (final Decl d : split(List.of(o.decl()), limit - OWED_HEADER - 8)) {
                pieces.add(new Owed(o.orderTs(), d, o.missing()));
            }
        }
        final List<List<Owed>> chunks = chunks(pieces, o -> 8 + declBytes(o.decl()), OWED_HEADER, limit,
            o -> "owed transaction of " + o.decl().keys().size() + " keys");
        final List<UnsafeBuffer> out = new ArrayList<>(chunks.size());
        for (int c = 0; c < chunks.size(); c++) {
            final Out o = new Out().u16(dead).u16(c).u16(chunks.size()).u32(chunks.get(c).size());
            for (final Owed item : chunks.get(c)) {
                final Decl d = item.decl();
                o.u64(item.orderTs()).u64(d.id()).u16(d.origin()).u16(d.keys().size());
                for (int i = 0; i < d.keys().size(); i++) {
                    o.key(d.keys().get(i)).u8((d.exclusive().get(i) ? 1 : 0)
                        | (item.missing().contains(d.keys().get(i)) ? 2 : 0));
                }
            }
            out.add(o.done());
        }
        return out;
    }

    /** The items of an owed chunk, after its header ({@code dead, chunk, chunks}) was read. */
    static List<Owed> readOwed(final In in) {
        final int n = in.u32();
        final List<Owed> items = new ArrayList<>(n);
        for (int t = 0; t < n; t++) {
            final long orderTs = in.u64();
            final long id = in.u64();
            final int origin = in.u16();
            final int keys = in.u16();
            final List<Key> k = new ArrayList<>(keys);
            final List<Boolean> x = new ArrayList<>(keys);
            final java.util.Set<Key> missing = new java.util.HashSet<>();
            for (int i = 0; i < keys; i++) {
                final Key key = in.key();
                final int flags = in.u8();
                k.add(key);
                x.add((flags & 1) != 0);
                if ((flags & 2) != 0) {
                    missing.add(key);
                }
            }
            items.add(new Owed(orderTs, new Decl(id, origin, k, x), missing));
        }
        return items;
    }

    /** Owed items with the parts of each transaction cut by {@link #owed} joined again (adjacent, same id). */
    static List<Owed> mergeOwed(final List<Owed> items) {
        final List<Owed> out = new ArrayList<>(items.size());
        for (final Owed o : items) {
            final Owed last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.decl().id() == o.decl().id()) {
                final Decl d = merge(List.of(last.decl(), o.decl())).get(0);
                final java.util.Set<Key> missing = new java.util.HashSet<>(last.missing());
                missing.addAll(o.missing());
                out.set(out.size() - 1, new Owed(last.orderTs(), d, missing));
            } else {
                out.add(o);
            }
        }
        return out;
    }

    /** The transactions of a batch chunk, after its header ({@code epoch, from, chunk, chunks}) was read. */
    static List<Decl> readBatch(final In in) {
        final int n = in.u32();
        final List<Decl> txns = new ArrayList<>(n);
        for (int t = 0; t < n; t++) {
            final long id = in.u64();
            final int origin = in.u16();
            final int keys = in.u16();
            final List<Key> k = new ArrayList<>(keys);
            final List<Boolean> x = new ArrayList<>(keys);
            for (int i = 0; i < keys; i++) {
                k.add(in.key());
                x.add(in.u8() != 0);
            }
            txns.add(new Decl(id, origin, k, x));
        }
        return txns;
    }

    /**
     * A participant's records of transaction {@code id} as messages of at most {@code limit} bytes; a record too large
     * for one goes in {@link #PIECE}s.
     */
    static List<UnsafeBuffer> forward(final long id, final List<Record> records, final int limit) {
        final List<Record> items = new ArrayList<>(records.size());
        for (final Record r : records) {
            if (FORWARD_HEADER + recordBytes(r.key(), r.value().length) <= limit) {
                items.add(r);
                continue;
            }
            for (final byte[] piece : pieces(r.key(), r.value(), limit - FORWARD_HEADER - recordBytes(r.key(), 8))) {
                items.add(new Record(r.key(), PIECE, r.version(), piece));
            }
        }
        final List<UnsafeBuffer> out = new ArrayList<>();
        for (final List<Record> chunk : chunks(items, r -> recordBytes(r.key(), r.value().length), FORWARD_HEADER,
            limit, r -> "record " + r.key())) {
            if (chunk.isEmpty()) {
                continue; // nothing to forward: no message
            }
            final Out o = new Out().u64(id).u16(chunk.size());
            for (final Record r : chunk) {
                o.key(r.key()).u8(r.status()).u64(r.version()).bytes(r.value());
            }
            out.add(o.done());
        }
        return out;
    }

    /** {@code value} of {@code key} cut into pieces of at most {@code room} bytes, each {@code total u32, offset u32, bytes}. */
    private static List<byte[]> pieces(final Key key, final byte[] value, final int room) {
        if (room <= 0) {
            throw new IllegalArgumentException("CALVIN value of " + key + " cannot be split into messages this small");
        }
        final List<byte[]> out = new ArrayList<>();
        for (int at = 0; at < value.length; at += room) {
            final int n = Math.min(room, value.length - at);
            final UnsafeBuffer piece = new UnsafeBuffer(new byte[8 + n]);
            piece.putInt(0, value.length);
            piece.putInt(4, at);
            piece.putBytes(8, value, at, n);
            out.add(piece.byteArray());
        }
        return out;
    }

    /** A write's kind with this set: a piece of its value ({@link #pieces}). */
    static final int PIECE_FLAG = 0x80;

    /** Reassembles records forwarded, and writes sent, in pieces. Loop-confined. */
    static final class Pieces {
        private final java.util.Map<Key, byte[]> values = new java.util.HashMap<>();
        private final java.util.Map<Key, Integer> got = new java.util.HashMap<>();

        /** {@code r} itself, or once its last piece arrived the whole record, else {@code null}. */
        Record add(final Record r) {
            if (r.status() != PIECE) {
                return r;
            }
            final byte[] value = add(r.key(), r.value());
            return value == null ? null : new Record(r.key(), FOUND, r.version(), value);
        }

        /** {@code w} itself, or once its last piece arrived the whole write, else {@code null}. */
        Write add(final Write w) {
            if ((w.kind() & PIECE_FLAG) == 0) {
                return w;
            }
            final byte[] value = add(w.key(), w.value());
            return value == null ? null : new Write(w.key(), (byte) (w.kind() & ~PIECE_FLAG), value);
        }

        /** Adds a piece ({@code total u32, offset u32, bytes}) of {@code key}'s value: the value once whole, else null. */
        private byte[] add(final Key key, final byte[] bytes) {
            final UnsafeBuffer piece = new UnsafeBuffer(bytes);
            final int total = piece.getInt(0);
            final int at = piece.getInt(4);
            final int n = bytes.length - 8;
            final byte[] value = values.computeIfAbsent(key, k -> new byte[total]);
            if (value.length != total || at < 0 || at + n > total) {
                throw new IllegalArgumentException("CALVIN piece of " + key + " at " + at + " (" + n + " bytes) "
                    + "does not fit its value of " + total + " bytes");
            }
            piece.getBytes(8, value, at, n);
            final int sum = got.merge(key, n, Integer::sum);
            if (sum < total) {
                return null;
            }
            values.remove(key);
            got.remove(key);
            return value;
        }

        /** Records with pieces missing (0 when quiet). */
        int partial() {
            return values.size();
        }
    }

    static List<Record> readForward(final In in) {
        final int n = in.u16();
        final List<Record> records = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            records.add(new Record(in.key(), (byte) in.u8(), in.u64(), in.bytes()));
        }
        return records;
    }

    /**
     * The writes of transaction {@code id} at one active participant as messages of at most {@code limit} bytes, each
     * {@code id u64, commitTs u64, total u16, n u16, n x (key, value)}; at least one (none: release only).
     */
    static List<UnsafeBuffer> write(final long id, final long commitTs, final List<Write> writes, final int limit) {
        final List<Write> items = new ArrayList<>(writes.size());
        for (final Write w : writes) {
            if (WRITE_HEADER + writeBytes(w) <= limit) {
                items.add(w);
                continue;
            }
            for (final byte[] piece : pieces(w.key(), w.value(), limit - WRITE_HEADER - writeBytes(new Write(w.key(),
                w.kind(), new byte[8])))) {
                items.add(new Write(w.key(), (byte) (w.kind() | PIECE_FLAG), piece));
            }
        }
        if (items.size() > 0xffff) {
            throw new IllegalArgumentException("CALVIN writes of " + items.size() + " messages' items at one node");
        }
        final List<UnsafeBuffer> out = new ArrayList<>();
        for (final List<Write> chunk : chunks(items, CalvinWire::writeBytes, WRITE_HEADER, limit,
            w -> "write of " + w.key())) {
            final Out o = new Out().u64(id).u64(commitTs).u16(items.size()).u16(chunk.size());
            for (final Write w : chunk) {
                o.key(w.key()).u8(w.kind()).bytes(w.value());
            }
            out.add(o.done());
        }
        return out;
    }

    /** A done of transaction {@code id}: written ({@code failure} null) or not, and why. */
    static UnsafeBuffer done(final long id, final Throwable failure) {
        final Out o = new Out().u64(id).u8(failure == null ? 1 : 0);
        if (failure != null) {
            o.bytes(String.valueOf(failure).getBytes(StandardCharsets.UTF_8));
        }
        return o.done();
    }

    /** Why a done's chunk was not written (null: it was), after its id was read. */
    static String readDone(final In in) {
        return in.u8() == 1 ? null : new String(in.bytes(), StandardCharsets.UTF_8);
    }

    /** The writes of a write message, after its header ({@code id, commitTs, total}) was read. */
    static List<Write> readWrites(final In in) {
        final int n = in.u16();
        final List<Write> writes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            writes.add(new Write(in.key(), (byte) in.u8(), in.bytes()));
        }
        return writes;
    }
}
