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
}
