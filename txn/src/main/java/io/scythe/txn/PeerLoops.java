package io.scythe.txn;

import io.scythe.rrpc.CnPeers;

import java.util.function.IntFunction;

/**
 * A compute-node loop's CN-to-CN messaging ({@link CnPeers}) and where every loop of the cluster answers, for
 * protocols whose compute nodes talk to each other (SELCC's invalidations): loops are numbered 1..n across the
 * cluster ({@link #number()} is this one's), and {@link #where} names the peer and loop index that serve a number.
 * Given to a runtime by whoever builds it ({@link TxnRuntime#peerLoops}) when the protocol's module asks for peers
 * ({@code ProtocolModule#peerMessaging}).
 */
public record PeerLoops(CnPeers peers, int number, int loopIndex, IntFunction<Address> where) {
    /** A loop of the cluster: the peer name {@link CnPeers#call} takes and the loop index there. */
    public record Address(String peer, int loop) {
    }
}
