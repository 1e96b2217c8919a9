package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;

import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * How the SPI maps to ibverbs through DiSNI, as pure code (tested without a NIC):
 *
 * <pre>
 *  SPI                         ibverbs (IbvSendWR)
 *  READ                        IBV_WR_RDMA_READ              rdma.remote_addr, rdma.rkey; sge = destination
 *  WRITE (inline)              IBV_WR_RDMA_WRITE (+ IBV_SEND_INLINE)   rdma.remote_addr, rdma.rkey; sge = source
 *  COMPARE_AND_SWAP            IBV_WR_ATOMIC_CMP_AND_SWP     atomic.remote_addr, rkey, compare_add = expected,
 *                                                            swap = desired; sge = 8-byte result buffer
 *  FETCH_AND_ADD               IBV_WR_ATOMIC_FETCH_AND_ADD   atomic.remote_addr, rkey, compare_add = delta
 *  SEND                        IBV_WR_SEND                   sge = source
 *  signaled                    IBV_SEND_SIGNALED
 *  a doorbell batch            one postSend of the list, in order
 *
 *  IbvWC status                WcStatus
 *  IBV_WC_SUCCESS              SUCCESS
 *  IBV_WC_LOC_LEN_ERR          LOCAL_LENGTH_ERROR
 *  IBV_WC_LOC_QP_OP_ERR, LOC_PROT_ERR, LOC_ACCESS_ERR, LOC_EEC_OP_ERR      LOCAL_QP_OPERATION_ERROR
 *  IBV_WC_WR_FLUSH_ERR         WR_FLUSH_ERROR
 *  IBV_WC_REM_INV_REQ_ERR, REM_INV_RD_REQ_ERR                              REMOTE_INVALID_REQUEST
 *  IBV_WC_REM_ACCESS_ERR       REMOTE_ACCESS_ERROR
 *  IBV_WC_RNR_RETRY_EXC_ERR    RNR_RETRY_EXCEEDED
 *  IBV_WC_RETRY_EXC_ERR, RESP_TIMEOUT_ERR                                  TRANSPORT_RETRY_EXCEEDED
 *  anything else               REMOTE_OPERATION_ERROR
 * </pre>
 * A responder cannot tell a requester it was fenced: on real hardware a revoked peer sees its verbs fail with
 * TRANSPORT_RETRY_EXCEEDED (the responder QP is gone) or WR_FLUSH_ERROR, never REVOKED.
 */
public final class DisniMapping {
    /** ibv_wc_opcode values (verbs.h). */
    static final int WC_SEND = 0;
    static final int WC_RDMA_WRITE = 1;
    static final int WC_RDMA_READ = 2;
    static final int WC_COMP_SWAP = 3;
    static final int WC_FETCH_ADD = 4;
    static final int WC_RECV = 1 << 7;

    private DisniMapping() {
    }

    /** Where a work request's local bytes are, in registered memory. */
    public interface SgeResolver {
        /** Fills {@code sge} for {@code wr}'s local buffer (staging it through registered memory if it is not). */
        void resolve(WorkRequest wr, int index, IbvSge sge);
    }

    /** The doorbell batch starting at {@code first}, as the list one {@code postSend} takes. */
    public static List<IbvSendWR> sendList(final WorkRequest first, final SgeResolver sges) {
        final List<IbvSendWR> list = new ArrayList<>();
        int index = 0;
        for (WorkRequest wr = first; wr != null; wr = wr.next()) {
            list.add(send(wr, index++, sges));
        }
        return list;
    }

    static IbvSendWR send(final WorkRequest wr, final int index, final SgeResolver sges) {
        final IbvSendWR out = new IbvSendWR();
        out.setWr_id(wr.wrId());
        int flags = wr.signaled() ? IbvSendWR.IBV_SEND_SIGNALED : 0;
        switch (wr.opcode()) {
            case READ:
                out.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
                out.getRdma().setRemote_addr(wr.remoteAddress());
                out.getRdma().setRkey(wr.rkey());
                break;
            case WRITE:
                out.setOpcode(IbvSendWR.IBV_WR_RDMA_WRITE);
                out.getRdma().setRemote_addr(wr.remoteAddress());
                out.getRdma().setRkey(wr.rkey());
                flags |= wr.inline() ? IbvSendWR.IBV_SEND_INLINE : 0;
                break;
            case COMPARE_AND_SWAP:
                out.setOpcode(IbvSendWR.IBV_WR_ATOMIC_CMP_AND_SWP);
                atomic(out, wr);
                out.getAtomic().setSwap(wr.swap());
                break;
            case FETCH_AND_ADD:
                out.setOpcode(IbvSendWR.IBV_WR_ATOMIC_FETCH_AND_ADD);
                atomic(out, wr);
                break;
            case SEND:
                out.setOpcode(IbvSendWR.IBV_WR_SEND);
                flags |= wr.inline() ? IbvSendWR.IBV_SEND_INLINE : 0;
                break;
            default:
                throw new IllegalArgumentException("no ibverbs send opcode for " + wr.opcode());
        }
        out.setSend_flags(flags);
        final LinkedList<IbvSge> list = new LinkedList<>();
        if (wr.length() > 0) {
            final IbvSge sge = new IbvSge();
            sges.resolve(wr, index, sge);
            list.add(sge);
        }
        out.setSg_list(list);
        out.setNum_sge(list.size());
        return out;
    }

    private static void atomic(final IbvSendWR out, final WorkRequest wr) {
        out.getAtomic().setRemote_addr(wr.remoteAddress());
        out.getAtomic().setRkey(wr.rkey());
        out.getAtomic().setCompare_add(wr.compareOrAdd());
    }

    /** A receive buffer at {@code address} (registered, {@code lkey}) of {@code length} bytes. */
    public static IbvRecvWR receive(final long wrId, final long address, final int length, final int lkey) {
        final IbvSge sge = new IbvSge();
        sge.setAddr(address);
        sge.setLength(length);
        sge.setLkey(lkey);
        final LinkedList<IbvSge> list = new LinkedList<>();
        list.add(sge);
        final IbvRecvWR out = new IbvRecvWR();
        out.setWr_id(wrId);
        out.setSg_list(list);
        out.setNum_sge(1);
        return out;
    }

    /** The SPI status of an ibverbs completion status ({@code enum ibv_wc_status}). */
    public static WcStatus status(final int ibvStatus) {
        final IbvWC.IbvWcStatus status;
        try {
            status = IbvWC.IbvWcStatus.valueOf(ibvStatus);
        } catch (final RuntimeException e) {
            return WcStatus.REMOTE_OPERATION_ERROR;
        }
        if (status == null) {
            return WcStatus.REMOTE_OPERATION_ERROR;
        }
        switch (status) {
            case IBV_WC_SUCCESS:
                return WcStatus.SUCCESS;
            case IBV_WC_LOC_LEN_ERR:
                return WcStatus.LOCAL_LENGTH_ERROR;
            case IBV_WC_LOC_QP_OP_ERR:
            case IBV_WC_LOC_PROT_ERR:
            case IBV_WC_LOC_ACCESS_ERR:
            case IBV_WC_LOC_EEC_OP_ERR:
                return WcStatus.LOCAL_QP_OPERATION_ERROR;
            case IBV_WC_WR_FLUSH_ERR:
                return WcStatus.WR_FLUSH_ERROR;
            case IBV_WC_REM_INV_REQ_ERR:
            case IBV_WC_REM_INV_RD_REQ_ERR:
                return WcStatus.REMOTE_INVALID_REQUEST;
            case IBV_WC_REM_ACCESS_ERR:
                return WcStatus.REMOTE_ACCESS_ERROR;
            case IBV_WC_RNR_RETRY_EXC_ERR:
                return WcStatus.RNR_RETRY_EXCEEDED;
            case IBV_WC_RETRY_EXC_ERR:
            case IBV_WC_RESP_TIMEOUT_ERR:
                return WcStatus.TRANSPORT_RETRY_EXCEEDED;
            default:
                return WcStatus.REMOTE_OPERATION_ERROR;
        }
    }

    /** The SPI opcode of an ibverbs completion opcode ({@code enum ibv_wc_opcode}). */
    public static Opcode opcode(final int ibvOpcode) {
        switch (ibvOpcode) {
            case WC_SEND:
                return Opcode.SEND;
            case WC_RDMA_WRITE:
                return Opcode.WRITE;
            case WC_RDMA_READ:
                return Opcode.READ;
            case WC_COMP_SWAP:
                return Opcode.COMPARE_AND_SWAP;
            case WC_FETCH_ADD:
                return Opcode.FETCH_AND_ADD;
            default:
                return (ibvOpcode & WC_RECV) != 0 ? Opcode.RECV : Opcode.SEND;
        }
    }

    /**
     * The old value an atomic left in its local buffer, in this host's order: ConnectX NICs write the atomic
     * response as it travels on the wire, big-endian (IBTA AtomicAckETH); set {@code bigEndian} false for a device
     * that converts. Unverified without a NIC here: {@code FabricOptions}-level setting of the disni provider.
     */
    public static long atomicResult(final long raw, final boolean bigEndian) {
        return bigEndian ? Long.reverseBytes(raw) : raw;
    }
}
