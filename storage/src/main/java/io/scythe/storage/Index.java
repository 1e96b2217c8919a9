package io.scythe.storage;

/** A table's index from 64-bit keys to object addresses, kept by the memory node's CPU. */
public interface Index {
    int OK = 0;
    /** The key is already present. */
    int DUPLICATE = -1;
    /** No room for the key (the hash index's probe window is full, or the index region is exhausted). */
    int FULL = -2;

    /** The object address of {@code key}, or 0. Lock-free; safe concurrently with one writer. */
    long lookup(long key);

    /** Adds {@code key}; callers serialise writers. @return {@link #OK}, {@link #DUPLICATE} or {@link #FULL} */
    int insert(long key, long address);

    /** Removes {@code key}; callers serialise writers. @return whether it was present */
    boolean remove(long key);

    long size();

    /** Told of one live entry of an index: its key and object pointer. */
    @FunctionalInterface
    interface EntryVisitor {
        void entry(long key, long pointer);
    }

    /** Visits every live entry (any order); callers serialise it with writers, as they do inserts and removals. */
    void forEach(EntryVisitor visitor);

    /** Registered memory the index occupies. */
    long bytes();
}
