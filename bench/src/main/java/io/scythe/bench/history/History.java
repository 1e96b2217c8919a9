package io.scythe.bench.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A history in memory, column by column (a million transactions take tens of megabytes, not a million objects):
 * transaction {@code t} has accesses {@code firstAccess(t)} to {@code firstAccess(t + 1) - 1}. Built by
 * {@link HistoryReader} from a file, or by hand with {@link #builder} (format version 2: versions are order keys,
 * reads may be of absent keys, writes may be deletes) or {@link #chainBuilder} (version 1: each write names the
 * version it overwrote). See {@link HistoryFormat}.
 */
public final class History {
    /** Version 2: a key's versions are ordered by value (else by the chain of overwrites, version 1). */
    final boolean ordered;
    final long initialVersion;
    final String label;
    final List<String> tables;
    final int transactions;
    final long[] txnIds;
    final long[] seqs;
    final long[] commitTs;
    /** Given up past its point of no return: its versions are placed, but it is not a committed transaction. */
    final boolean[] inDoubt;
    /** Ran at read committed ({@link HistoryFormat#RC_TXN}): checked at that level only. */
    final boolean[] readCommitted;
    final int[] firstAccess;
    final int accesses;
    final int[] accessTable;
    final byte[] accessFlags;
    final long[] accessKey;
    final long[] versionRead;
    final long[] versionMade;
    final long[] versionOverwritten;

    private History(final Builder b) {
        ordered = b.ordered;
        initialVersion = b.initialVersion;
        label = b.label;
        tables = List.copyOf(b.tables);
        transactions = b.transactions;
        txnIds = Arrays.copyOf(b.txnIds, transactions);
        seqs = Arrays.copyOf(b.seqs, transactions);
        commitTs = Arrays.copyOf(b.commitTs, transactions);
        inDoubt = Arrays.copyOf(b.inDoubt, transactions);
        readCommitted = Arrays.copyOf(b.readCommitted, transactions);
        firstAccess = Arrays.copyOf(b.firstAccess, transactions + 1);
        firstAccess[transactions] = b.accesses;
        accesses = b.accesses;
        accessTable = Arrays.copyOf(b.accessTable, accesses);
        accessFlags = Arrays.copyOf(b.accessFlags, accesses);
        accessKey = Arrays.copyOf(b.accessKey, accesses);
        versionRead = Arrays.copyOf(b.versionRead, accesses);
        versionMade = Arrays.copyOf(b.versionMade, accesses);
        versionOverwritten = Arrays.copyOf(b.versionOverwritten, accesses);
    }

    /** A version 2 history: versions are order keys; absent reads and deletes are recorded. */
    public static Builder builder(final long initialVersion, final String label) {
        return new Builder(true, initialVersion, label);
    }

    /** A version 1 history: each write names the version it overwrote, and the chains order a key's versions. */
    public static Builder chainBuilder(final long initialVersion, final String label) {
        return new Builder(false, initialVersion, label);
    }

    /** Whether versions are order keys (format version 2). */
    public boolean ordered() {
        return ordered;
    }

    public int transactions() {
        return transactions;
    }

    public String label() {
        return label;
    }

    public long initialVersion() {
        return initialVersion;
    }

    public long txnId(final int t) {
        return txnIds[t];
    }

    /**
     * How many committed (not in-doubt) transactions write a key and read another they do not write: under snapshot
     * isolation, the reads that no lock and no validation cover (e.g. SmallBank's WriteCheck reading savings), so a
     * sweep can tell that it explored them.
     */
    public int writersReadingUnwritten() {
        int count = 0;
        for (int t = 0; t < transactions; t++) {
            boolean writes = false;
            boolean readsOnly = false;
            for (int a = firstAccess[t]; a < firstAccess[t + 1]; a++) {
                final boolean w = (accessFlags[a] & HistoryFormat.WRITE) != 0;
                writes |= w;
                readsOnly |= !w && (accessFlags[a] & HistoryFormat.READ) != 0;
            }
            count += writes && readsOnly && !inDoubt[t] ? 1 : 0;
        }
        return count;
    }

    /** Builds a history one transaction at a time: {@link #txn}, then its reads and writes. */
    public static final class Builder {
        private final boolean ordered;
        private final long initialVersion;
        private final String label;
        private final List<String> tables = new ArrayList<>();
        private final Map<String, Integer> tableIds = new HashMap<>();
        private int transactions;
        private long[] txnIds = new long[1024];
        private long[] seqs = new long[1024];
        private long[] commitTs = new long[1024];
        private boolean[] inDoubt = new boolean[1024];
        private boolean[] readCommitted = new boolean[1024];
        private int[] firstAccess = new int[1025];
        private int accesses;
        private int[] accessTable = new int[4096];
        private byte[] accessFlags = new byte[4096];
        private long[] accessKey = new long[4096];
        private long[] versionRead = new long[4096];
        private long[] versionMade = new long[4096];
        private long[] versionOverwritten = new long[4096];

        private Builder(final boolean ordered, final long initialVersion, final String label) {
            this.ordered = ordered;
            this.initialVersion = initialVersion;
            this.label = label;
        }

        /** Defines table {@code id} (ids are dense from 0, in order). */
        public Builder table(final int id, final String name) {
            if (id != tables.size()) {
                throw new IllegalArgumentException("table id " + id + " (" + name + ") out of order: expected "
                    + tables.size());
            }
            tables.add(name);
            tableIds.put(name, id);
            return this;
        }

        int tableId(final String name) {
            final Integer id = tableIds.get(name);
            if (id != null) {
                return id;
            }
            table(tables.size(), name);
            return tables.size() - 1;
        }

        /** Starts the next transaction: its id, its commit order {@code seq}, its commit timestamp. */
        public Builder txn(final long txnId, final long seq, final long ts) {
            if (transactions == txnIds.length) {
                final int n = transactions * 2;
                txnIds = Arrays.copyOf(txnIds, n);
                seqs = Arrays.copyOf(seqs, n);
                commitTs = Arrays.copyOf(commitTs, n);
                inDoubt = Arrays.copyOf(inDoubt, n);
                readCommitted = Arrays.copyOf(readCommitted, n);
                firstAccess = Arrays.copyOf(firstAccess, n + 1);
            }
            txnIds[transactions] = txnId;
            seqs[transactions] = seq;
            commitTs[transactions] = ts;
            firstAccess[transactions] = accesses;
            transactions++;
            return this;
        }

        /** Marks the current transaction as in doubt ({@link HistoryFormat#DOUBT}). */
        public Builder inDoubt() {
            if (transactions == 0) {
                throw new IllegalStateException("in doubt before any transaction");
            }
            inDoubt[transactions - 1] = true;
            return this;
        }

        /** Marks the current transaction as run at read committed ({@link HistoryFormat#RC_TXN}). */
        public Builder readCommitted() {
            if (transactions == 0) {
                throw new IllegalStateException("read committed before any transaction");
            }
            readCommitted[transactions - 1] = true;
            return this;
        }

        /** The current transaction read {@code key} of {@code table} at {@code version}. */
        public Builder read(final String table, final long key, final long version) {
            return access(tableId(table), HistoryFormat.READ, key, version, 0, 0);
        }

        /** The current transaction read {@code key} at {@code read} and wrote {@code made} over it. */
        public Builder readWrite(final String table, final long key, final long read, final long made) {
            return access(tableId(table), HistoryFormat.READ | HistoryFormat.WRITE, key, read, made, read);
        }

        /** The current transaction wrote {@code made} over {@code overwritten} without reading the key (version 1). */
        public Builder write(final String table, final long key, final long made, final long overwritten) {
            return access(tableId(table), HistoryFormat.WRITE, key, 0, made, overwritten);
        }

        /** The current transaction wrote {@code made} without reading the key (version 2: placed by its value). */
        public Builder write(final String table, final long key, final long made) {
            return access(tableId(table), HistoryFormat.WRITE, key, 0, made, 0);
        }

        /** The current transaction found {@code key} absent, at a version at most {@code bound} (version 2). */
        public Builder readAbsent(final String table, final long key, final long bound) {
            return access(tableId(table), HistoryFormat.READ | HistoryFormat.ABSENT, key, bound, 0, 0);
        }

        /** The current transaction inserted {@code key} (absent at most at {@code bound}) at {@code made}. */
        public Builder insert(final String table, final long key, final long bound, final long made) {
            return access(tableId(table), HistoryFormat.READ | HistoryFormat.ABSENT | HistoryFormat.WRITE, key, bound,
                made, 0);
        }

        /** The current transaction read {@code key} at {@code read} and deleted it, at {@code made} (version 2). */
        public Builder delete(final String table, final long key, final long read, final long made) {
            return access(tableId(table), HistoryFormat.READ | HistoryFormat.WRITE | HistoryFormat.TOMBSTONE, key,
                read, made, 0);
        }

        /** One access of the current transaction, as in the file (flags {@link HistoryFormat#READ} / WRITE). */
        public Builder access(final int table, final int flags, final long key, final long read, final long made,
                              final long overwritten) {
            if (transactions == 0) {
                throw new IllegalStateException("an access before any transaction");
            }
            if (table < 0 || table >= tables.size()) {
                throw new IllegalArgumentException("undefined table id " + table);
            }
            final int known = ordered ? 15 : 3;
            if ((flags & (HistoryFormat.READ | HistoryFormat.WRITE)) == 0 || (flags & ~known) != 0) {
                throw new IllegalArgumentException("access flags " + flags + " (must read, write or both"
                    + (ordered ? "; absent only with read, tombstone only with write)" : ")"));
            }
            if ((flags & HistoryFormat.ABSENT) != 0 && (flags & HistoryFormat.READ) == 0
                || (flags & HistoryFormat.TOMBSTONE) != 0 && (flags & HistoryFormat.WRITE) == 0) {
                throw new IllegalArgumentException("access flags " + flags + " (absent only with read, tombstone "
                    + "only with write)");
            }
            if (accesses == accessKey.length) {
                final int n = accesses * 2;
                accessTable = Arrays.copyOf(accessTable, n);
                accessFlags = Arrays.copyOf(accessFlags, n);
                accessKey = Arrays.copyOf(accessKey, n);
                versionRead = Arrays.copyOf(versionRead, n);
                versionMade = Arrays.copyOf(versionMade, n);
                versionOverwritten = Arrays.copyOf(versionOverwritten, n);
            }
            accessTable[accesses] = table;
            accessFlags[accesses] = (byte) flags;
            accessKey[accesses] = key;
            versionRead[accesses] = read;
            versionMade[accesses] = made;
            versionOverwritten[accesses] = overwritten;
            accesses++;
            return this;
        }

        public History build() {
            return new History(this);
        }
    }
}
