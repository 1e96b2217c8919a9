package io.scythe.txn.onesided;

import io.scythe.storage.Table;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The commit chain ({@code OneSidedTxn#commitChain}, its {@code Committing} object) ends the point-of-no-return count
 * its write-back started ({@code pointOfNoReturn}, counted in {@code Catalog#decided}) once the commit's outcome is
 * known, as {@code finishCommit} does: committed, or failed past it. Before, the chain never ended the count, and a
 * node would never have reported itself drained of that epoch; RCC's locking protocols now commit through the chain
 * ({@code commitChainLogged}: {@code RccLockingTest} covers their success path), this test also the failure path.
 */
class CommitChainPointOfNoReturnTest {
    private OneMemoryNode node;

    @AfterEach
    void close() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    /** A commit chain whose write-back passes the point of no return, then succeeds or fails. */
    private static final class Gated extends OneSidedTxn {
        private final boolean writeBackFails;

        Gated(final TxnRuntime runtime, final boolean writeBackFails) {
            super(runtime);
            this.writeBackFails = writeBackFails;
        }

        @Override
        protected Table.InsertLock insertLock() {
            return null;
        }

        @Override
        public String mode() {
            return "gated";
        }

        @Override
        public Future<UnsafeBuffer> read(final String table, final long key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<Long> commit() {
            return commitChain(Future.succeededFuture(), 7);
        }

        @Override
        public Future<Void> abort() {
            return Future.succeededFuture();
        }

        @Override
        protected Future<Void> commitValidation() {
            return Future.succeededFuture();
        }

        @Override
        protected Future<Void> commitWriteBack(final long version) {
            final Throwable refused = pointOfNoReturn().pass();
            if (refused != null) {
                return Future.failedFuture(refused);
            }
            return writeBackFails ? Future.failedFuture(new IllegalStateException("write-back failed"))
                : Future.succeededFuture();
        }
    }

    @Test
    void shouldEndThePointOfNoReturnCountOnceTheChainsOutcomeIsKnown() throws Exception {
        node = new OneMemoryNode("t", 64);
        final long[] inFlight = node.on(r -> {
            final long epoch = r.catalog().epoch();
            final Future<Long> committed = new Gated(r, false).commit();
            final Future<Long> failed = new Gated(r, true).commit();
            return Future.succeededFuture(new long[] {committed.succeeded() ? committed.result() : -1,
                failed.failed() ? 1 : 0, r.catalog().inFlightBefore(epoch + 1)});
        });
        assertThat(inFlight[0]).as("committed with its version").isEqualTo(7);
        assertThat(inFlight[1]).as("the failing write-back failed the commit").isEqualTo(1);
        assertThat(inFlight[2]).as("commits past their point of no return still counted").isZero();
    }
}
