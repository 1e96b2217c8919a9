package io.scythe.txn;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.ToIntFunction;

/**
 * An open set of labelled values (stages, abort reasons) that modules extend: each value gets an index in definition
 * order (its slot in counting arrays) and a position that orders reports. Thread-safe; values are defined from static
 * initializers.
 */
final class Labels<T> {
    private final String kind;
    private final List<T> defined = new ArrayList<>();
    private final List<String> labels = new ArrayList<>();
    private final List<Integer> positions = new ArrayList<>();

    Labels(final String kind) {
        this.kind = kind;
    }

    /**
     * A new value made by {@code make(label, index)}, reported at {@code position}.
     *
     * @throws IllegalArgumentException when a value of that label exists
     */
    synchronized T define(final String label, final int position, final BiFunction<String, Integer, T> make) {
        if (labels.contains(label)) {
            throw new IllegalArgumentException(kind + " '" + label + "' is defined already");
        }
        final T value = make.apply(label, defined.size());
        defined.add(value);
        labels.add(label);
        positions.add(position);
        return value;
    }

    /** Every value defined so far, by position (then definition order). */
    synchronized List<T> values(final ToIntFunction<T> index) {
        final List<T> all = new ArrayList<>(defined);
        all.sort(Comparator.comparingInt((T v) -> positions.get(index.applyAsInt(v))).thenComparingInt(index));
        return all;
    }

    synchronized int count() {
        return defined.size();
    }
}
