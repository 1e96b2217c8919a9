package io.scythe.storage;

/** Which index a table keeps. */
public enum IndexKind {
    /** {@link HashIndexLayout}: one READ per one-sided lookup. The default. */
    HASH,
    /** {@link SkipListLayout}: ordered; one READ per node visited one-sided; the paper's YCSB index. */
    SKIPLIST
}
