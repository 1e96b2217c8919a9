package io.scythe.txn.api;

import io.scythe.txn.Txn;
import io.scythe.txn.UnknownKeyException;
import io.vertx.core.Future;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/** Stored procedures by name: what the event-bus API and the benchmarks run. Thread-safe registry. */
public final class Procedures {
    /** A procedure's body bound to its arguments. */
    @FunctionalInterface
    public interface Binder {
        Function<Txn, Future<Long>> bind(long[] args);
    }

    private record Entry(int arity, Binder binder) {
    }

    private final Map<String, Entry> byName = new ConcurrentHashMap<>();

    /** Registers {@code name}, taking exactly {@code arity} arguments. */
    public Procedures register(final String name, final int arity, final Binder binder) {
        if (arity < 0) {
            throw new IllegalArgumentException("arity of " + name + " must not be negative");
        }
        if (byName.putIfAbsent(name, new Entry(arity, binder)) != null) {
            throw new IllegalArgumentException("procedure " + name + " is already registered");
        }
        return this;
    }

    /** Every registered procedure's name and the number of arguments it takes, in name order. */
    public java.util.SortedMap<String, Integer> arities() {
        final java.util.SortedMap<String, Integer> out = new java.util.TreeMap<>();
        byName.forEach((name, e) -> out.put(name, e.arity()));
        return out;
    }

    /**
     * The body of {@code name} bound to {@code args}.
     *
     * @throws UnknownKeyException      for a name not registered
     * @throws IllegalArgumentException for the wrong number of arguments
     */
    public Function<Txn, Future<Long>> bind(final String name, final long[] args) {
        final Entry e = name == null ? null : byName.get(name);
        if (e == null) {
            throw new UnknownKeyException("unknown procedure '" + name + "'; registered: " + byName.keySet());
        }
        final int given = args == null ? 0 : args.length;
        if (given != e.arity()) {
            throw new IllegalArgumentException("procedure " + name + " takes " + e.arity() + " arguments, not "
                + given);
        }
        final long[] bound = args == null ? new long[0] : args;
        return io.scythe.txn.FaultPoints.wrap(name, bound, e.binder().bind(bound)); // armed only in fault tests
    }
}
