package io.scythe.txn.lotus;

import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;

import java.util.function.Function;

/**
 * The protocol shape Lotus and its Motor baseline share: a named protocol whose objects keep a CVT of {@code versions}
 * cells and as many full-record versions ({@link Cvt#room}) in their slots, serializable or under snapshot isolation,
 * optionally configured by options after its name ({@code motor:versions=N}).
 */
public final class CvtProtocol implements Protocol {
    /** Begins one transaction of the protocol on a loop's runtime. */
    @FunctionalInterface
    public interface Begin {
        Txn begin(TxnRuntime runtime, boolean hint);
    }

    private final String name;
    private final int versions;
    private final boolean snapshotIsolation;
    private final Begin begin;
    private final Function<String, Protocol> configure;

    /**
     * @param configure the protocol a name's options stand for (throwing for options it does not know), or null if it
     *                  takes none
     * @throws IllegalArgumentException when {@code versions} is outside [2, 64]
     */
    public CvtProtocol(final String name, final int versions, final boolean snapshotIsolation, final Begin begin,
                       final Function<String, Protocol> configure) {
        Cvt.room(0, versions); // 2 to 64 versions, else a clear error now
        this.name = name;
        this.versions = versions;
        this.snapshotIsolation = snapshotIsolation;
        this.begin = begin;
        this.configure = configure;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Txn begin(final TxnRuntime runtime, final boolean hint) {
        return begin.begin(runtime, hint);
    }

    @Override
    public int objectRoom(final io.scythe.storage.TableSchema schema) {
        return Cvt.room(schema.maxValueBytes(), versions);
    }

    @Override
    public boolean snapshotIsolation() {
        return snapshotIsolation;
    }

    @Override
    public Protocol configured(final String options) {
        return configure == null ? Protocol.super.configured(options) : configure.apply(options);
    }

    @Override
    public String toString() {
        return name;
    }
}
