package io.scythe.txn.selcc;

import io.scythe.txn.TxnRuntime;

/**
 * A loop's participant number (1..58, {@link LatchWord}) from its transaction ids: bits 32-39 name the compute node
 * slot and bits 40-47 the loop ({@code RecoveryRpc.NODE_ID_MASK}). The simulator and the embedded cluster number
 * every compute-node loop of the cluster once ({@code ComputeNodePeers#loopNumber}), in bits 40-47 with slot 0, so its
 * participant is that number. A cluster whose ids carry a node
 * slot would need a participant directory, which is not implemented (issue 21): refused with a clear error.
 */
public final class Participants {
    private Participants() {
    }

    public static int of(final TxnRuntime runtime) {
        return of(runtime.idBase());
    }

    static int of(final long idBase) {
        final int slot = (int) (idBase >>> 32) & 0xff;
        final int loop = (int) (idBase >>> 40) & 0xff;
        if (slot != 0) {
            throw new UnsupportedOperationException("SELCC participants in a cluster with node slots (idBase="
                + Long.toHexString(idBase) + ") need a participant directory: not implemented (issue 21); the "
                + "simulator numbers loops 1..58 itself");
        }
        if (loop < 1 || loop > LatchWord.MAX_PARTICIPANTS) {
            throw new IllegalArgumentException("loop number " + loop + " (idBase=" + Long.toHexString(idBase)
                + "): SELCC takes at most " + LatchWord.MAX_PARTICIPANTS + " compute-node loops in the cluster "
                + "(one reader bit each); run fewer compute nodes or loops");
        }
        return loop;
    }
}
