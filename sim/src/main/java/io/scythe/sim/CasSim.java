package io.scythe.sim;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.Zipf;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.TableDescriptor;
import io.scythe.txn.Catalog;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Scythe's Table 1 in virtual time: every client issues one RDMA CAS after another on an 8-byte word of host memory of
 * memory node 0, the word drawn from {@code words} by Zipf(theta) (theta 0: uniform), and the latency of each CAS (post
 * to completion) is recorded. Each CAS tries to advance the word by one from the value this client last saw there,
 * so the word is really read and written back on the NIC (success or not, the cost is the same); no retry, no lock:
 * this measures the verb, as the paper's table does. With the {@code write} verb each client issues 8-byte RDMA
 * WRITEs of the drawn word instead: with many clients in flight the pair is Lotus §2's perftest (peak 8 B WRITE and
 * CAS rates of one responder NIC).
 */
public final class CasSim {
    public static final String TABLE = "cas_words";
    private static final int TABLE_ID = 1;

    /** Scythe Table 1 (ConnectX-5, 8 threads): P50 us, P90 us, Mops, uniform then Zipfian. */
    public static final double[][] PAPER_TABLE_1 = {{8.4, 16.3, 1.76}, {11.7, 72.9, 0.42}};
    /** Lotus §2, perftest against one MN's NIC: peak 8 B WRITE and 8 B CAS rates, Mops. */
    public static final double LOTUS_WRITE_MOPS = 35;
    public static final double LOTUS_CAS_MOPS = 2.5;

    /** The verb each client issues. */
    public enum Verb {
        CAS, WRITE;

        /** The verb named {@code name} (case-insensitive), or a clear error. */
        public static Verb named(final String name) {
            for (final Verb v : values()) {
                if (v.name().equalsIgnoreCase(name)) {
                    return v;
                }
            }
            throw new IllegalArgumentException("unknown verb '" + name + "'; the cas workload issues cas or write");
        }
    }

    private CasSim() {
    }

    /** The words, loaded on memory node 0 (the one the clients CAS on). */
    public static final class Spec implements OltpSpec {
        private final int words;
        private final double theta;
        private final Verb verb;
        private long[] pointers;

        public Spec(final int words, final double theta) {
            this(words, theta, Verb.CAS);
        }

        public Spec(final int words, final double theta, final Verb verb) {
            if (words < 1) {
                throw new IllegalArgumentException("words=" + words + " must be positive");
            }
            new Zipf(1, theta); // validates theta with a clear message
            this.words = words;
            this.theta = theta;
            this.verb = java.util.Objects.requireNonNull(verb, "verb");
        }

        @Override
        public String name() {
            return "cas";
        }

        @Override
        public String quantity() {
            return "none";
        }

        @Override
        public JsonObject params() {
            return new JsonObject().put("words", words).put("theta", theta)
                .put("verb", verb.name().toLowerCase(java.util.Locale.ROOT));
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            final long[] loaded = LockSim.loadZeroedWords(db, part, TABLE_ID, TABLE, words);
            if (loaded != null) {
                pointers = loaded;
            }
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            throw new UnsupportedOperationException("the cas workload runs single verbs, not transactions");
        }

        @Override
        public long total(final List<LogDb> dbs) {
            return 0;
        }

        /** One CAS (or WRITE) on a drawn word; the latency recorded is the verb's. */
        Simulation.Operation operation() {
            final Zipf zipf = new Zipf(words, theta);
            final long[] seen = new long[words];
            final org.agrona.concurrent.UnsafeBuffer eight = new org.agrona.concurrent.UnsafeBuffer(
                org.agrona.BufferUtil.allocateDirectAligned(8, 8));
            return (runtime, random) -> {
                final Catalog.Partition partition = runtime.catalog().table(TABLE).partitions().get(0);
                final TableDescriptor d = partition.descriptor();
                final int word = zipf.next(random);
                // the word is the object's 8-byte value, so no lock or version word is left changed
                final long address = ObjectLayout.addressOf(pointers[word]) + ObjectLayout.VALUE_OFFSET;
                final long start = runtime.timers().nowNs();
                final long expected = seen[word];
                if (verb == Verb.WRITE) {
                    return runtime.channel(partition.node())
                        .compose(ch -> ch.write(address, d.objects().rkey(), eight, 0, 8))
                        .map(v -> runtime.timers().nowNs() - start);
                }
                return runtime.channel(partition.node())
                    .compose(ch -> ch.compareAndSwap(address, d.objects().rkey(), expected, expected + 1))
                    .map(found -> {
                        seen[word] = found == expected ? expected + 1 : found;
                        return runtime.timers().nowNs() - start;
                    });
            };
        }
    }

    /** Builds the run of one key distribution; {@code options}' clients are the CAS requesters. */
    public static Simulation simulation(final SimOptions options, final Spec spec) {
        return new Simulation(options, spec).operation(spec.operation());
    }
}
