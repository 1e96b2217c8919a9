package io.scythe.txn.lotus;

import io.scythe.bridge.VerbException;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.scythe.rrpc.RpcException;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which failures of a Lotus operation wait for a memory-node failover before they stand ({@code OneSidedTxn#goneAsAbort}, shared with RCC,
 * review finding 6): only those that may say a memory node is gone. Before, every error that was not an abort waited
 * out the failover wait (2 ms in the simulator), and under {@code --crash-mn} the explorer's phantom seeds committed
 * nothing (LotusMnCrashSimTest).
 */
class LotusGoneTest {
    @Test
    void shouldWaitOnlyForAnErrorThatMaySayAMemoryNodeIsGone() {
        assertThat(LotusTxn.mayBeGone(new VerbException(Opcode.READ, WcStatus.TRANSPORT_RETRY_EXCEEDED, "mn1")))
            .as("a completion error").isTrue();
        assertThat(LotusTxn.mayBeGone(new VerbException(Opcode.WRITE, "queue pair in error state")))
            .as("refused at post time: the queue pair broke").isTrue();
        assertThat(LotusTxn.mayBeGone(new io.scythe.fabric.FabricException(
            "node mn1 is not attached to the local fabric 'sim'"))).as("no connection to it").isTrue();
        assertThat(LotusTxn.mayBeGone(new RpcException(RpcException.DISCONNECTED, "connection to mn1 failed")))
            .isTrue();
        assertThat(LotusTxn.mayBeGone(new RpcException(RpcException.TIMED_OUT, "no reply from mn1"))).isTrue();

        assertThat(LotusTxn.mayBeGone(new RpcException(RpcException.BACK_PRESSURE, "ring full")))
            .as("a refusal for now").isFalse();
        assertThat(LotusTxn.mayBeGone(new VerbException(Opcode.WRITE, "send queue full")))
            .as("a refusal for now").isFalse();
        assertThat(LotusTxn.mayBeGone(new RpcException(RpcException.HANDLER_FAILED, "handler threw")))
            .as("an answer: the node lives").isFalse();
        assertThat(LotusTxn.mayBeGone(new RpcException(RpcException.FIRST_APPLICATION_CODE + 2, "table full")))
            .as("an answer").isFalse();
        assertThat(LotusTxn.mayBeGone(new IllegalStateException("lotus: a transaction declared read-only wrote")))
            .as("this code's own error").isFalse();
        assertThat(LotusTxn.mayBeGone(new AbortException(AbortReason.LOCKED, "held"))).as("an abort stands").isFalse();
    }
}
