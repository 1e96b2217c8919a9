package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Vertx;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The disni provider without a NIC: its start-up check and the mapping of every SPI call to ibverbs. */
class DisniProviderTest {

    @Test
    void shouldRefuseToStartWithOneSentenceNamingWhatIsMissing() throws Exception {
        Assumptions.assumeFalse(DisniSupport.available(), "this host has RDMA: the contract test runs instead");
        final Vertx vertx = Vertx.vertx();
        try {
            assertThatThrownBy(() -> Fabric.open(vertx, new FabricOptions().provider(DisniFabric.NAME)))
                .isInstanceOf(FabricException.class)
                .hasMessageStartingWith("the disni fabric cannot start: ")
                .satisfies(e -> {
                    final String message = e.getMessage();
                    assertThat(message.contains("libdisni") || message.contains("RDMA device")).isTrue();
                    assertThat(message).doesNotContain("\n");
                    if (message.contains("libdisni")) {
                        assertThat(message).contains("java.library.path");
                    }
                });
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    private static List<long[]> sges() {
        return new ArrayList<>();
    }

    @Test
    void shouldMapADoorbellBatchToOnePostSendListWithEveryField() {
        final UnsafeBuffer local = new UnsafeBuffer(new byte[64]);
        final WorkRequest read = new WorkRequest().read(0x1000, 11, local, 8, 16).wrId(1).signaled(false);
        final WorkRequest write = read.link(new WorkRequest().write(0x2000, 12, local, 0, 8).inline(true).wrId(2)
            .signaled(false));
        final WorkRequest cas = write.link(new WorkRequest().compareAndSwap(0x3000, 13, 5, 9, local, 24).wrId(3)
            .signaled(false));
        final WorkRequest faa = cas.link(new WorkRequest().fetchAndAdd(0x4000, 14, 7, local, 32).wrId(4)
            .signaled(false));
        faa.link(new WorkRequest().send(local, 40, 4).wrId(5));
        final List<long[]> resolved = sges();
        final List<IbvSendWR> list = DisniMapping.sendList(read, (wr, index, sge) -> {
            sge.setAddr(1_000_000L + index);
            sge.setLkey(77);
            sge.setLength(wr.length());
            resolved.add(new long[] {index, wr.length()});
        });
        assertThat(list).hasSize(5);
        assertThat(list).extracting(IbvSendWR::getWr_id).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(list).extracting(IbvSendWR::getOpcode).containsExactly(IbvSendWR.IBV_WR_RDMA_READ,
            IbvSendWR.IBV_WR_RDMA_WRITE, IbvSendWR.IBV_WR_ATOMIC_CMP_AND_SWP, IbvSendWR.IBV_WR_ATOMIC_FETCH_AND_ADD,
            IbvSendWR.IBV_WR_SEND);
        assertThat(list.get(0).getRdma().getRemote_addr()).isEqualTo(0x1000);
        assertThat(list.get(0).getRdma().getRkey()).isEqualTo(11);
        assertThat(list.get(0).getSend_flags()).isZero();
        assertThat(list.get(1).getSend_flags()).isEqualTo(IbvSendWR.IBV_SEND_INLINE);
        assertThat(list.get(2).getAtomic().getRemote_addr()).isEqualTo(0x3000);
        assertThat(list.get(2).getAtomic().getRkey()).isEqualTo(13);
        assertThat(list.get(2).getAtomic().getCompare_add()).isEqualTo(5);
        assertThat(list.get(2).getAtomic().getSwap()).isEqualTo(9);
        assertThat(list.get(3).getAtomic().getCompare_add()).isEqualTo(7);
        assertThat(list.get(4).getSend_flags()).isEqualTo(IbvSendWR.IBV_SEND_SIGNALED);
        for (int i = 0; i < 5; i++) {
            assertThat(list.get(i).getNum_sge()).isEqualTo(1);
            assertThat(list.get(i).getSge(0).getAddr()).isEqualTo(1_000_000L + i);
            assertThat(list.get(i).getSge(0).getLkey()).isEqualTo(77);
        }
        assertThat(list.get(0).getSge(0).getLength()).isEqualTo(16);
        assertThat(list.get(2).getSge(0).getLength()).isEqualTo(8);
        assertThat(resolved).hasSize(5);
    }

    @Test
    void shouldMapAReceiveBuffer() {
        final IbvRecvWR wr = DisniMapping.receive(42, 0xabc000, 512, 9);
        assertThat(wr.getWr_id()).isEqualTo(42);
        assertThat(wr.getNum_sge()).isEqualTo(1);
        assertThat(wr.getSg_list().getFirst().getAddr()).isEqualTo(0xabc000);
        assertThat(wr.getSg_list().getFirst().getLength()).isEqualTo(512);
        assertThat(wr.getSg_list().getFirst().getLkey()).isEqualTo(9);
    }

    @Test
    void shouldMapEveryCompletionStatusAndOpcode() {
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal())).isEqualTo(WcStatus.SUCCESS);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_LOC_LEN_ERR.ordinal()))
            .isEqualTo(WcStatus.LOCAL_LENGTH_ERROR);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal()))
            .isEqualTo(WcStatus.WR_FLUSH_ERROR);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal()))
            .isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_REM_INV_REQ_ERR.ordinal()))
            .isEqualTo(WcStatus.REMOTE_INVALID_REQUEST);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_RNR_RETRY_EXC_ERR.ordinal()))
            .isEqualTo(WcStatus.RNR_RETRY_EXCEEDED);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal()))
            .isEqualTo(WcStatus.TRANSPORT_RETRY_EXCEEDED);
        assertThat(DisniMapping.status(IbvWC.IbvWcStatus.IBV_WC_FATAL_ERR.ordinal()))
            .isEqualTo(WcStatus.REMOTE_OPERATION_ERROR);
        assertThat(DisniMapping.status(999)).isEqualTo(WcStatus.REMOTE_OPERATION_ERROR);
        assertThat(DisniMapping.opcode(DisniMapping.WC_RDMA_READ)).isEqualTo(Opcode.READ);
        assertThat(DisniMapping.opcode(DisniMapping.WC_COMP_SWAP)).isEqualTo(Opcode.COMPARE_AND_SWAP);
        assertThat(DisniMapping.opcode(DisniMapping.WC_FETCH_ADD)).isEqualTo(Opcode.FETCH_AND_ADD);
        assertThat(DisniMapping.opcode(DisniMapping.WC_RECV)).isEqualTo(Opcode.RECV);
    }

    @Test
    void shouldReadABigEndianAtomicResultAsTheValueItIs() {
        final long value = 0x0102030405060708L;
        final long asWritten = Long.reverseBytes(value); // big-endian bytes read by a little-endian host
        assertThat(DisniMapping.atomicResult(asWritten, true)).isEqualTo(value);
        assertThat(DisniMapping.atomicResult(value, false)).isEqualTo(value);
    }
}
