package io.scythe.txn;

/** Tells a request refused for now (flow control) from one that failed: what may simply be made again. */
public final class Refusal {
    private Refusal() {
    }

    /**
     * Whether {@code e} is a refusal for now: a verb not posted because the send queue was full, or an RPC refused
     * for back-pressure. Nothing of the request happened, so it may be made again.
     */
    public static boolean forNow(final Throwable e) {
        return e instanceof io.scythe.bridge.VerbException v && v.status() == null
            && String.valueOf(v.getMessage()).contains("send queue full")
            || e instanceof io.scythe.rrpc.RpcException r && r.code() == io.scythe.rrpc.RpcException.BACK_PRESSURE;
    }

    /**
     * Whether an RPC that failed with {@code e} may still have run on its server: not when it was refused before it
     * was sent ({@link #forNow}) or the server answered that it did not run it (an unknown RPC, a malformed or
     * oversized request, or a handler's own answer); otherwise (the connection broke, no reply came within the call's
     * bound, the handler threw half-way, any other failure) it may have.
     */
    public static boolean rpcMayHaveLanded(final Throwable e) {
        if (forNow(e)) {
            return false;
        }
        if (e instanceof io.scythe.rrpc.RpcException r) {
            return r.code() == io.scythe.rrpc.RpcException.DISCONNECTED
                || r.code() == io.scythe.rrpc.RpcException.TIMED_OUT
                || r.code() == io.scythe.rrpc.RpcException.HANDLER_FAILED;
        }
        return true;
    }
}
