package io.scythe.txn;

import io.scythe.bridge.VerbException;
import io.scythe.fabric.Opcode;
import io.scythe.rrpc.RpcException;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A request refused for now (send queue or RRPC ring full) is an abort that the coordinator retries, not a failure. */
class BackPressureTest {
    private OneMemoryNode node;

    @BeforeEach
    void setUp() throws Exception {
        node = new OneMemoryNode("rows", 32);
    }

    @AfterEach
    void tearDown() throws Exception {
        node.close();
    }

    @Test
    void shouldTellARefusalForNowFromARealFailure() {
        assertThat(Refusal.forNow(new VerbException(Opcode.READ,
            "send queue full (1024 requests outstanding)"))).isTrue();
        assertThat(Refusal.forNow(new RpcException(RpcException.BACK_PRESSURE, "ring full"))).isTrue();
        assertThat(Refusal.forNow(new VerbException(Opcode.READ, "queue pair to mn is closed"))).isFalse();
        assertThat(Refusal.forNow(new RpcException(RpcException.DISCONNECTED, "gone"))).isFalse();
    }

    @Test
    void shouldRetryAnAttemptWhoseReadWasRefusedForNow() throws Exception {
        final int[] calls = new int[1];
        final List<Long> seen = node.on(rt -> {
            final Coordinator coordinator = new Coordinator(rt, io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), 10);
            return coordinator.run(txn -> ++calls[0] == 1
                ? Future.<Long>failedFuture(new VerbException(Opcode.READ, "send queue full (8 requests outstanding)"))
                : txn.read("rows", 3).map(v -> v.getLong(0))).map(outcome -> List.of(outcome.result(),
                (long) outcome.attempts(), coordinator.aborts(AbortReason.BACK_PRESSURE)));
        });
        assertThat(seen).containsExactly(100L, 2L, 1L);
    }

    @Test
    void shouldStartARetryOnlyOnceTheReadsTheAbortedAttemptLeftInFlightAreDone() throws Exception {
        final int[] calls = new int[1];
        final List<Future<?>> firstReads = new java.util.ArrayList<>();
        final Boolean settledBeforeRetry = node.on(rt -> new Coordinator(rt, io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), 10).run(txn -> {
            if (++calls[0] == 1) {
                // The attempt ends (aborted) while its reads are still on their way.
                for (long key = 0; key < 8; key++) {
                    firstReads.add(txn.read("rows", key));
                }
                return Future.<Boolean>failedFuture(new AbortException(AbortReason.LOCKED, "given up early"));
            }
            return Future.succeededFuture(firstReads.stream().allMatch(Future::isComplete));
        }).map(Coordinator.Outcome::result));
        assertThat(calls[0]).isEqualTo(2);
        assertThat(settledBeforeRetry).isTrue();
    }
}
