package io.scythe.bench.history;

import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records committed transactions into a history file ({@link HistoryFormat}). Event loops never touch the file: each
 * thread encodes into its own 64 KiB chunk and, when it is full, queues it for a writer thread (an unbounded queue, so
 * a commit never waits on the disk). A record never spans chunks, so chunks of different loops interleave whole.
 * {@link #close()} flushes every thread's chunk and writes the END record; call it when no transaction runs.
 */
public final class HistoryWriter implements HistoryRecorder, AutoCloseable {
    private static final int CHUNK_BYTES = 64 * 1024;
    private static final byte[] STOP = new byte[0];

    private final Path file;
    private final OutputStream out;
    private final LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
    private final ConcurrentHashMap<String, Integer> tableIds = new ConcurrentHashMap<>();
    private final List<Encoder> encoders = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Encoder> encoder = ThreadLocal.withInitial(this::newEncoder);
    private final AtomicLong sequence = new AtomicLong();
    private final Thread writer;
    private volatile IOException failure;
    private volatile boolean closed;
    private int tablesDefined;

    /**
     * Creates (or truncates) {@code file} and starts its writer thread.
     *
     * @param initialVersion the version every key has when the history begins ({@code ObjectLayout.LOADED_VERSION}
     *                       for freshly loaded data)
     * @param label          what the history is of (workload, protocol, clients), for the reader
     */
    public HistoryWriter(final Path file, final long initialVersion, final String label) throws IOException {
        this.file = file;
        this.out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20);
        final byte[] header = new byte[HistoryFormat.MAGIC.length + 1 + 2 * HistoryFormat.MAX_VARINT_BYTES
            + label.length() * 3];
        System.arraycopy(HistoryFormat.MAGIC, 0, header, 0, HistoryFormat.MAGIC.length);
        int at = HistoryFormat.MAGIC.length;
        header[at++] = HistoryFormat.HEADER;
        at = HistoryFormat.putVarint(header, at, initialVersion);
        at = putString(header, at, label);
        queue.add(java.util.Arrays.copyOf(header, at));
        this.writer = new Thread(this::drain, "history-writer " + file.getFileName());
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * Where the history of one run goes ({@code --history FILE|DIR}): {@code path} itself when the run is the only one
     * and {@code path} is not a directory, else {@code path/<run>.history}; the directories are created.
     *
     * @throws IllegalArgumentException when they cannot be created
     */
    public static Path fileFor(final Path path, final boolean onlyRun, final String run) {
        try {
            if (onlyRun && !Files.isDirectory(path) && !path.toString().endsWith("/")) {
                if (path.getParent() != null) {
                    Files.createDirectories(path.getParent());
                }
                return path;
            }
            Files.createDirectories(path);
            return path.resolve(run + ".history");
        } catch (final IOException e) {
            throw new IllegalArgumentException("--history " + path + ": cannot create " + e.getMessage()
                + (onlyRun ? "" : " (several runs need a directory)"), e);
        }
    }

    public Path file() {
        return file;
    }

    /** Transactions recorded so far. */
    public long transactions() {
        return sequence.get();
    }

    @Override
    public void committed(final long txnId, final long commitTs, final List<Access> accesses) {
        record(HistoryFormat.TXN, txnId, commitTs, accesses);
    }

    @Override
    public void committedReadCommitted(final long txnId, final long commitTs, final List<Access> accesses) {
        record(HistoryFormat.RC_TXN, txnId, commitTs, accesses);
    }

    @Override
    public void inDoubt(final long txnId, final List<Access> accesses) {
        record(HistoryFormat.DOUBT, txnId, 0, accesses);
    }

    private void record(final int type, final long txnId, final long commitTs, final List<Access> accesses) {
        final Encoder e = encoder.get();
        synchronized (e) { // uncontended except against close(), which flushes every thread's chunk
            e.transaction(type, txnId, commitTs, accesses);
        }
    }

    private Encoder newEncoder() {
        final Encoder e = new Encoder();
        encoders.add(e);
        return e;
    }

    private int tableId(final String table) {
        final Integer known = tableIds.get(table);
        if (known != null) {
            return known;
        }
        // The TABLE record is queued inside computeIfAbsent: no thread learns the id before its definition is queued,
        // so it precedes every chunk that uses it.
        return tableIds.computeIfAbsent(table, this::defineTable);
    }

    /** The next table id, its TABLE record queued: one at a time, so ids are queued in order (the reader wants it). */
    private int defineTable(final String t) {
        synchronized (tableIds) { // not this: close() holds this while it waits for every thread's chunk
            final int id = tablesDefined++;
            final byte[] record = new byte[1 + HistoryFormat.MAX_VARINT_BYTES * 2 + t.length() * 3];
            int at = 0;
            record[at++] = HistoryFormat.TABLE;
            at = HistoryFormat.putVarint(record, at, id);
            at = putString(record, at, t);
            queue.add(java.util.Arrays.copyOf(record, at));
            return id;
        }
    }

    private static int putString(final byte[] buffer, final int at, final String s) {
        final byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        final int start = HistoryFormat.putVarint(buffer, at, bytes.length);
        System.arraycopy(bytes, 0, buffer, start, bytes.length);
        return start + bytes.length;
    }

    private void drain() {
        try {
            while (true) {
                final byte[] chunk = queue.take();
                if (chunk == STOP) {
                    break;
                }
                out.write(chunk);
            }
            out.close();
        } catch (final IOException e) {
            failure = e;
            queue.clear();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Flushes every thread's chunk, writes the END record and waits for the file to be written.
     *
     * @throws IOException when writing the file failed (the history is then incomplete)
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        for (final Encoder e : encoders) {
            synchronized (e) {
                e.handOff();
            }
        }
        final byte[] end = new byte[1 + HistoryFormat.MAX_VARINT_BYTES];
        end[0] = HistoryFormat.END;
        queue.add(java.util.Arrays.copyOf(end, HistoryFormat.putVarint(end, 1, sequence.get())));
        queue.add(STOP);
        try {
            writer.join();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while writing history " + file, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** One thread's chunk being filled. */
    private final class Encoder {
        private byte[] chunk = new byte[CHUNK_BYTES];
        private int length;

        void transaction(final int type, final long txnId, final long commitTs, final List<Access> accesses) {
            if (closed) {
                throw new IllegalStateException("history " + file + " is closed; a transaction committed after it");
            }
            final int worst = 1 + 4 * HistoryFormat.MAX_VARINT_BYTES + accesses.size() * 4
                * HistoryFormat.MAX_VARINT_BYTES;
            if (length + worst > chunk.length) {
                handOff();
                if (worst > chunk.length) {
                    chunk = new byte[worst];
                }
            }
            final byte[] b = chunk;
            int at = length;
            int count = 0;
            for (final Access a : accesses) {
                count += HistoryFormat.flags(a) != 0 ? 1 : 0;
            }
            b[at++] = (byte) type;
            at = HistoryFormat.putVarint(b, at, sequence.incrementAndGet());
            at = HistoryFormat.putVarint(b, at, txnId);
            at = HistoryFormat.putVarint(b, at, commitTs);
            at = HistoryFormat.putVarint(b, at, count);
            for (final Access a : accesses) {
                final int flags = HistoryFormat.flags(a);
                if (flags == 0) {
                    continue;
                }
                at = HistoryFormat.putVarint(b, at, ((long) tableId(a.table) << HistoryFormat.FLAG_BITS) | flags);
                at = HistoryFormat.putVarint(b, at, a.key);
                if ((flags & HistoryFormat.READ) != 0) {
                    at = HistoryFormat.putVarint(b, at, a.readVersion);
                }
                if ((flags & HistoryFormat.WRITE) != 0) {
                    at = HistoryFormat.putVarint(b, at, a.installedVersion);
                }
            }
            length = at;
        }

        void handOff() {
            if (length > 0) {
                queue.add(java.util.Arrays.copyOf(chunk, length));
                length = 0;
            }
        }
    }
}
