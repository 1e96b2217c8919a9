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

    /**
     * The participant of {@code runtime}'s loop. Ids with a node slot (the simulator's crash-recovery runs, whose ids
     * carry the compute node's slot and the loop's index in it, as a cluster's do) take the loop number the peers give
     * it ({@code PeerLoops#number}, the one the invalidations route by), and the loop is entered in the
     * {@link SelccRecovery} directory so that a dead node's bits can be found on the memory nodes.
     */
    public static int of(final TxnRuntime runtime) {
        final long idBase = runtime.idBase();
        if (((idBase >>> 32) & 0xff) != 0 && runtime.peerLoops() != null) {
            final int number = runtime.peerLoops().number();
            if (number < 1 || number > LatchWord.MAX_PARTICIPANTS) {
                throw new IllegalArgumentException("loop number " + number + ": SELCC takes at most "
                    + LatchWord.MAX_PARTICIPANTS + " compute-node loops in the cluster (one reader bit each); run fewer "
                    + "compute nodes or loops");
            }
            SelccRecovery.joined(runtime.fabric(), idBase, number);
            return number;
        }
        return of(idBase);
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
