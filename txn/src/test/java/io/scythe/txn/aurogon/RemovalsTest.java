package io.scythe.txn.aurogon;

import io.scythe.rrpc.RpcException;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RemovalsTest {
    @Test
    void shouldPollACatalogAtAThousandthOfTheFailoverWait() {
        assertThat(Removals.pollNs(2_020_000)).as("the simulator's memory-node crash runs").isEqualTo(2_020);
        assertThat(Removals.pollNs(6_000_000_000L)).as("a cluster compute node's 6 s wait").isEqualTo(6_000_000);
        assertThat(Removals.pollNs(100_000_000_000L)).isEqualTo(Removals.MAX_POLL_NS);
        assertThat(Removals.pollNs(10_000)).isEqualTo(Removals.MIN_POLL_NS);
    }

    /**
     * Issue 20 (rrpcheal): a call timed out that its node took (it answered a later call) fails at once as it is, the
     * node still configured; one the node did not answer past waits the failover wait for a removal, as before. Before,
     * both waited: seed 44 of the tpcc crash explorer with a cut memory node held each attempt's pending versions 8 ms
     * past its READ's timeout, a convoy that never drained.
     */
    @Test
    void shouldJudgeATimedOutCallItsNodeTookAtOnceWithoutTheFailoverWait() {
        final Timers never = new Timers() {
            @Override
            public long nowNs() {
                return 1_000;
            }

            @Override
            public Future<Void> after(final long delayNs) {
                return Promise.<Void>promise().future(); // the wait never ends within this test
            }
        };
        final Catalog catalog = new Catalog();
        final TxnRuntime runtime = new TxnRuntime(catalog, null, never, null, null, 0).failoverWaitNs(8_020_000);
        final RpcException taken = new RpcException(RpcException.TIMED_OUT, "held at mn0", true);
        final Future<Object> judged = Removals.gone(runtime, "mn0", taken);
        assertThat(judged.isComplete()).as("judged without the failover wait").isTrue();
        assertThat(judged.cause()).isSameAs(taken);
        final Future<Object> waiting = Removals.gone(runtime, "mn0",
            new RpcException(RpcException.TIMED_OUT, "no later call answered", false));
        assertThat(waiting.isComplete()).as("a call not known taken waits for a removal").isFalse();
    }
}
