package io.scythe.txn;

import io.scythe.storage.TableDescriptor;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where each table lives: a table is split by key over partitions, one per memory node ({@code key mod n}), each
 * a LogDB table described by its {@link TableDescriptor}. Shared by every loop of a compute node; immutable entries.
 */
public final class Catalog {
    /** One partition of a table: the memory node holding it and where its data is there. */
    public record Partition(String node, TableDescriptor descriptor) {
    }

    /** A table and its partitions. */
    public record Table(String name, List<Partition> partitions) {
        public Table {
            if (partitions.isEmpty()) {
                throw new IllegalArgumentException("table " + name + " has no partition");
            }
            partitions = List.copyOf(partitions);
        }

        public Partition partitionOf(final long key) {
            return partitions.get((int) Long.remainderUnsigned(key, partitions.size()));
        }
    }

    private final Map<String, Table> tables = new ConcurrentHashMap<>();

    public Catalog add(final String name, final List<Partition> partitions) {
        if (tables.putIfAbsent(name, new Table(name, partitions)) != null) {
            throw new IllegalArgumentException("table " + name + " is already in the catalog");
        }
        return this;
    }

    /** Every table (recovery walks their partitions). */
    public java.util.Collection<Table> tables() {
        return java.util.List.copyOf(tables.values());
    }

    /** @throws UnknownKeyException for a table not in the catalog */
    public Table table(final String name) {
        final Table t = tables.get(name);
        if (t == null) {
            throw new UnknownKeyException("unknown table '" + name + "'; known: " + tables.keySet());
        }
        return t;
    }
}
