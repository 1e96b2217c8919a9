package io.scythe.sim;

import io.scythe.txn.Access;
import io.scythe.txn.OneSidedTxn;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The history hook: wraps a protocol so that every committed attempt's reads (with the versions read) and writes reach
 * {@code sink} as a {@link CommittedTxn}, for a serializability checker plugged in from outside. The wrapped
 * protocol's behaviour is unchanged (each call is passed through); attempts of protocols not built on
 * {@link OneSidedTxn} cannot show their versions and fail the run with a clear error instead of being recorded wrong.
 */
public final class RecordingProtocol implements Protocol {
    private final Protocol inner;
    private final Consumer<CommittedTxn> sink;
    private final org.agrona.concurrent.NanoClock clock;
    private long sequence;

    public RecordingProtocol(final Protocol inner, final org.agrona.concurrent.NanoClock clock,
                             final Consumer<CommittedTxn> sink) {
        this.inner = inner;
        this.clock = clock;
        this.sink = sink;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public Txn begin(final TxnRuntime runtime, final boolean hot) {
        return new Recorded(inner.begin(runtime, hot));
    }

    private final class Recorded implements Txn {
        private final Txn txn;

        Recorded(final Txn txn) {
            this.txn = txn;
        }

        @Override
        public Future<UnsafeBuffer> read(final String table, final long key) {
            return txn.read(table, key);
        }

        @Override
        public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
            return txn.readForUpdate(table, key);
        }

        @Override
        public void write(final String table, final long key, final DirectBuffer value, final int offset,
                          final int length) {
            txn.write(table, key, value, offset, length);
        }

        @Override
        public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                           final int length) {
            txn.insert(table, key, value, offset, length);
        }

        @Override
        public void delete(final String table, final long key) {
            txn.delete(table, key);
        }

        @Override
        public Future<Long> commit() {
            if (!(txn instanceof OneSidedTxn oneSided)) {
                return Future.failedFuture(new IllegalStateException("protocol " + inner.name() + " ("
                    + txn.getClass().getSimpleName() + ") does not expose its read and write sets to the recorder"));
            }
            return txn.commit().onSuccess(version -> {
                final List<CommittedTxn.Read> reads = new ArrayList<>();
                final List<CommittedTxn.Write> writes = new ArrayList<>();
                for (final Access a : oneSided.accesses()) {
                    if (a.fetched) {
                        reads.add(new CommittedTxn.Read(a.table, a.key, a.readVersion));
                    }
                    if (a.dirty) {
                        writes.add(new CommittedTxn.Write(a.table, a.key));
                    }
                }
                sink.accept(new CommittedTxn(sequence++, txn.mode(), version, List.copyOf(reads),
                    List.copyOf(writes), clock.nanoTime()));
            });
        }

        @Override
        public Future<Void> abort() {
            return txn.abort();
        }

        @Override
        public String mode() {
            return txn.mode();
        }

        @Override
        public long[] stageNanos() {
            return txn.stageNanos();
        }
    }
}
