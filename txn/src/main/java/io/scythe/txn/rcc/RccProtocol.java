package io.scythe.txn.rcc;

import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;

/**
 * One of RCC's protocols in one form ({@link RccForm}): {@code rcc-<protocol>} is its one-sided form, and
 * {@code rcc-<protocol>:primitive=rpc}, {@code :primitive=onesided} or {@code :hybrid=<code>} name the others
 * ({@link #configured}). A protocol not built yet is registered by its name and refuses to begin an attempt, saying
 * so ({@link #notImplemented}).
 */
public final class RccProtocol implements Protocol {
    /** Makes an attempt of a protocol in a form; {@code mode} is the protocol's full name. */
    @FunctionalInterface
    public interface Attempts {
        Txn begin(TxnRuntime runtime, RccForm form, String mode);
    }

    private final String base;
    private final RccForm form;
    private final TupleFormat tuple;
    private final Attempts attempts;
    private final String name;
    /** The stages whose primitive changes what the protocol does (what the enumerator varies). */
    private final java.util.Set<RccForm.Step> steps;
    /** The enumerator ({@code hybrid=auto}): it names every code and runs none. */
    private final boolean auto;

    /** {@code base} in its one-sided form, named {@code base}; {@code steps} are the stages it has a primitive for. */
    public RccProtocol(final String base, final TupleFormat tuple, final java.util.Set<RccForm.Step> steps,
                       final Attempts attempts) {
        this(base, tuple, RccForm.ONE_SIDED, attempts, base, steps, false);
    }

    private RccProtocol(final String base, final TupleFormat tuple, final RccForm form, final Attempts attempts,
                        final String name, final java.util.Set<RccForm.Step> steps, final boolean auto) {
        this.base = base;
        this.tuple = tuple;
        this.form = form;
        this.attempts = attempts;
        this.name = name;
        this.steps = steps;
        this.auto = auto;
    }

    /**
     * With {@code hybrid=auto}, the name of every code over the stages this protocol has (the others one-sided, as
     * their digit changes nothing; Log too, though it has a primitive: RCC found it always one-sided, and varying it
     * would double every enumeration): {@code 2^stages} forms, pure RPC and pure one-sided among them. Else itself.
     */
    @Override
    public java.util.List<String> variants() {
        if (!auto) {
            return java.util.List.of(name);
        }
        return RccForm.codesOver(steps).stream().map(f -> base + ":" + f.option()).toList();
    }

    /** A protocol that is registered but not built yet: every attempt is refused, naming the issue. */
    public static Attempts notImplemented(final String base) {
        return new NotImplemented(base);
    }

    private record NotImplemented(String base) implements Attempts {
        @Override
        public Txn begin(final TxnRuntime runtime, final RccForm form, final String mode) {
            throw refusal(mode);
        }

        UnsupportedOperationException refusal(final String mode) {
            return new UnsupportedOperationException("protocol '" + mode + "' (RCC's " + base.substring(4)
                .toUpperCase(java.util.Locale.ROOT) + ") is registered but not implemented yet (issue 18: RCC); "
                + "built so far: rcc-nowait, rcc-waitdie, rcc-occ, rcc-mvcc and rcc-sundial, each one-sided, by RPC and as "
                + "hybrids");
        }
    }

    /** A protocol not built yet refuses here already, when a coordinator is set up, before any attempt. */
    @Override
    public io.scythe.txn.RetryPolicy retryPolicy(final TxnRuntime runtime,
                                                 final io.vertx.core.json.JsonObject options) {
        if (attempts instanceof NotImplemented n) {
            throw n.refusal(name);
        }
        if (auto) {
            begin(runtime, false); // the refusal: not one form
        }
        return io.scythe.txn.RetryPolicy.NO_HINT;
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * MVCC keeps rts and three older versions after each object's value ({@link io.scythe.txn.rcc.mvcc.MvccTuple}),
     * SUNDIAL its rts.
     */
    @Override
    public int objectRoom(final io.scythe.storage.TableSchema schema) {
        if (tuple == TupleFormat.MVCC) {
            return io.scythe.txn.rcc.mvcc.MvccTuple.room(schema.maxValueBytes());
        }
        return tuple == TupleFormat.SUNDIAL ? 8 : 0;
    }

    /** The protocol's name without options, e.g. {@code rcc-nowait}. */
    public String base() {
        return base;
    }

    public RccForm form() {
        return form;
    }

    /** Its per-tuple metadata (Fig. 3). */
    public TupleFormat tuple() {
        return tuple;
    }

    @Override
    public Txn begin(final TxnRuntime runtime, final boolean hint) {
        if (auto) {
            throw new IllegalStateException("'" + name + "' names every hybrid code of " + base + " (" + variants()
                .size() + "), not one form: run its variants() ('scythe sim --protocols' does)");
        }
        return attempts.begin(runtime, form, name());
    }

    /** The same protocol in the form {@code options} name ({@link RccForm#parse}). */
    @Override
    public Protocol configured(final String options) {
        if (options.trim().equals("hybrid=auto")) {
            if (attempts instanceof NotImplemented n) {
                throw n.refusal(base + ":hybrid=auto");
            }
            return new RccProtocol(base, tuple, RccForm.ONE_SIDED, attempts, base + ":hybrid=auto", steps, true);
        }
        final RccForm parsed = RccForm.parse(options);
        return new RccProtocol(base, tuple, parsed, attempts, base + ":" + parsed.option(), steps, false);
    }

    @Override
    public String toString() {
        return name();
    }
}
