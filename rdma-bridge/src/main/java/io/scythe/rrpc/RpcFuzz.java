package io.scythe.rrpc;

import org.agrona.concurrent.UnsafeBuffer;

import java.util.Random;

/**
 * Random and half-valid RRPC calls to a memory node's services: mostly a registered RPC id (sometimes any 16-bit id)
 * with a random payload, half of those of 16 bytes or more carrying a table id and a loaded key where most requests
 * carry them, to get past the first checks into the handlers' deeper ones. One generator, used by the suite's fuzz test
 * and by {@code scythe fuzz}.
 */
public final class RpcFuzz {
    /** One call: the RPC id and its payload. */
    public record Call(int rpcId, UnsafeBuffer payload) {
    }

    /** What a call got: a reply, an error reply, no reply in time. */
    public enum Outcome { REPLY, ERROR_REPLY, TIMEOUT }

    private RpcFuzz() {
    }

    /** A call to one of {@code ids} (the services the server registered), drawn from {@code random}. */
    public static Call call(final Random random, final int[] ids) {
        final int rpcId = random.nextInt(10) == 0 || ids.length == 0 ? random.nextInt(0x10000)
            : ids[random.nextInt(ids.length)];
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[random.nextInt(80)]);
        for (int i = 0; i < payload.capacity(); i++) {
            payload.putByte(i, (byte) random.nextInt(256));
        }
        if (payload.capacity() >= 16 && random.nextBoolean()) {
            payload.putLong(0, random.nextInt(3));
            payload.putLong(8, random.nextInt(20));
        }
        return new Call(rpcId, payload);
    }

    /** How a call ended: {@code failure} null for a reply. */
    public static Outcome outcome(final Throwable failure) {
        if (failure == null) {
            return Outcome.REPLY;
        }
        return failure instanceof RpcException e && e.code() == RpcException.TIMED_OUT ? Outcome.TIMEOUT
            : Outcome.ERROR_REPLY;
    }
}
