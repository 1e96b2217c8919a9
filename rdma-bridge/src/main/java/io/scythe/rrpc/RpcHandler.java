package io.scythe.rrpc;

/**
 * Serves one RPC id on the server's CPU (its poller thread). It reads the request while it is called (the payload
 * lives in the ring and is released afterwards) and answers through the responder, at once or later on the same
 * thread (for example after a one-sided verb of its own). A responder answered before the handler returns is not
 * used after it returns: the server answers its next request with the same object ({@link RpcResponder}).
 */
@FunctionalInterface
public interface RpcHandler {
    void handle(RpcRequest request, RpcResponder responder);
}
