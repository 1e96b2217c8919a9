package io.scythe.rrpc;

/**
 * Serves one RPC id on the server's CPU (its poller thread). It reads the request while it is called (the payload
 * lives in the ring and is released afterwards) and answers through the responder, at once or later on the same
 * thread (for example after a one-sided verb of its own).
 */
@FunctionalInterface
public interface RpcHandler {
    void handle(RpcRequest request, RpcResponder responder);
}
